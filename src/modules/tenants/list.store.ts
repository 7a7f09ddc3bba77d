import type { Queryable } from '../../storage/db.ts';
import type { TenantRow } from './store.ts';

export interface ListParams {
  limit: number;
  page: number;
  filter?: string;
  sortBy: 'createdAt' | 'name' | 'tenantId';
  order: 'ASC' | 'DESC';
  tenantIds?: string[];
}

/** Sort keys per sort: each ends on tenant_id, so equal keys keep a stable order. Each has a partial index (live rows). */
const SORT_SQL: Record<ListParams['sortBy'], string[]> = {
  createdAt: ['created_at', 'tenant_id'],
  name: ['(lower(name) COLLATE "C")', 'tenant_id'],
  tenantId: ['tenant_id'],
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Rows skipped from which a page reads its keys first and its rows after (below it, the rows directly). */
const DEEP_PAGE = 1000;

/** `k0, k1, …` selected next to tenant_id by the key queries, and the ORDER BY over them. */
const keyColumns = (sortBy: ListParams['sortBy']) =>
  SORT_SQL[sortBy].map((expr, i) => (expr === 'tenant_id' ? null : `${expr} AS k${i}`)).filter((c): c is string => c !== null);
const keyOrder = (sortBy: ListParams['sortBy'], dir: string, alias: string) =>
  SORT_SQL[sortBy].map((expr, i) => `${alias}.${expr === 'tenant_id' ? 'tenant_id' : `k${i}`} ${dir}`).join(', ');

/**
 * One page of live accounts and the total. Every sort ends on tenant_id, so equal keys keep a stable order.
 *
 * Without a filter: the total is the live-account count that triggers keep (migration 0025). A deep page is found on the sort's index first (keys and
 * tenant ids only, which PostgreSQL reads from the index alone once the table is vacuumed) and then joined to its
 * rows, so it skips index entries rather than whole rows; a page near either end is read directly. A page past the
 * middle is read from the far end in the opposite order (and reversed), so the last page costs what the first does.
 *
 * With a filter (or `tenantIds`): one statement finds the matches once, keeping their keys, and takes both the total
 * and the page from them. A filter of three characters or more finds its matches on the trigram index of `search`;
 * a shorter one (or one the planner judges broad) reads every live row's stored `search`, without calling lower().
 */
export async function listAccounts(db: Queryable, p: ListParams): Promise<{ rows: TenantRow[]; total: number }> {
  const where = ['deleted_at IS NULL'];
  const params: unknown[] = [];
  if (p.filter) {
    // `search` is lower(name) ‖ chr(1) ‖ lower(tenant_id) (migration 0025); a filter holding chr(1) matches nothing.
    if (p.filter.includes('\u0001')) return { rows: [], total: 0 };
    params.push(`%${escapeLike(p.filter.toLowerCase())}%`);
    where.push(`search LIKE $${params.length}`);
  }
  if (p.tenantIds) {
    params.push(p.tenantIds);
    where.push(`tenant_id = ANY($${params.length}::text[])`);
  }
  const whereSql = where.join(' AND ');
  const offset = p.page * p.limit;
  const keys = ['tenant_id', ...keyColumns(p.sortBy)].join(', ');

  if (params.length > 0) {
    const { rows } = await db.query<TenantRow & { total: number }>(
      `WITH matches AS MATERIALIZED (SELECT ${keys} FROM tenants WHERE ${whereSql}),
            page AS (SELECT * FROM matches m ORDER BY ${keyOrder(p.sortBy, p.order, 'm')} LIMIT ${p.limit} OFFSET ${offset})
       SELECT c.total, t.*
         FROM (SELECT count(*)::int AS total FROM matches) c
         LEFT JOIN (page JOIN tenants t USING (tenant_id)) ON true
        ORDER BY ${keyOrder(p.sortBy, p.order, 'page')}`,
      params,
    );
    const total = rows[0]?.total ?? 0;
    return { rows: rows.filter((r) => r.tenant_id !== null).map(({ total: _total, ...row }) => row as TenantRow), total };
  }

  // The live-account count kept by triggers (migration 0025), not a count over the index.
  const { rows: countRows } = await db.query<{ n: number }>('SELECT sum(n)::int AS n FROM tenant_live_count');
  const total = countRows[0].n ?? 0;
  if (offset >= total) return { rows: [], total };

  const fromEnd = offset > total / 2;
  const dir = fromEnd ? (p.order === 'ASC' ? 'DESC' : 'ASC') : p.order;
  const limit = fromEnd ? Math.min(p.limit, total - offset) : p.limit;
  const skip = fromEnd ? Math.max(total - offset - p.limit, 0) : offset;
  const orderSql = SORT_SQL[p.sortBy].map((c) => `${c} ${dir}`).join(', ');
  // Near either end the rows are read straight off the index; a deep page looks up its rows after skipping keys.
  const { rows } = await db.query<TenantRow>(
    skip < DEEP_PAGE
      ? `SELECT * FROM tenants WHERE ${whereSql} ORDER BY ${orderSql} LIMIT ${limit} OFFSET ${skip}`
      : `SELECT t.*
           FROM (SELECT ${keys} FROM tenants WHERE ${whereSql} ORDER BY ${orderSql} LIMIT ${limit} OFFSET ${skip}) page
           JOIN tenants t USING (tenant_id)
          ORDER BY ${keyOrder(p.sortBy, dir, 'page')}`,
  );
  return { rows: fromEnd ? rows.reverse() : rows, total };
}
