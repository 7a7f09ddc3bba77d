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

const SORT_SQL: Record<ListParams['sortBy'], string[]> = {
  createdAt: ['created_at', 'tenant_id'],
  name: ['(lower(name) COLLATE "C")', 'tenant_id'],
  tenantId: ['tenant_id'],
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * One page of live accounts and the total. Every sort ends on tenant_id, so equal keys keep a stable order.
 * A page past the middle is read from the far end in the opposite order (and reversed), so the last page costs
 * what the first does.
 */
export async function listAccounts(db: Queryable, p: ListParams): Promise<{ rows: TenantRow[]; total: number }> {
  const where = ['deleted_at IS NULL'];
  const params: unknown[] = [];
  if (p.filter) {
    params.push(`%${escapeLike(p.filter.toLowerCase())}%`);
    where.push(`(lower(name) LIKE $${params.length} OR lower(tenant_id) LIKE $${params.length})`);
  }
  if (p.tenantIds) {
    params.push(p.tenantIds);
    where.push(`tenant_id = ANY($${params.length}::text[])`);
  }
  const whereSql = where.join(' AND ');
  const { rows: countRows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tenants WHERE ${whereSql}`, params);
  const total = countRows[0].n;
  const offset = p.page * p.limit;
  if (offset >= total) return { rows: [], total };

  const fromEnd = offset > total / 2;
  const dir = fromEnd ? (p.order === 'ASC' ? 'DESC' : 'ASC') : p.order;
  const limit = fromEnd ? Math.min(p.limit, total - offset) : p.limit;
  const skip = fromEnd ? Math.max(total - offset - p.limit, 0) : offset;
  const orderSql = SORT_SQL[p.sortBy].map((c) => `${c} ${dir}`).join(', ');
  const { rows } = await db.query<TenantRow>(
    `SELECT * FROM tenants WHERE ${whereSql} ORDER BY ${orderSql} LIMIT ${limit} OFFSET ${skip}`,
    params,
  );
  return { rows: fromEnd ? rows.reverse() : rows, total };
}
