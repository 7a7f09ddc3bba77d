import type { Queryable } from '../../storage/db.ts';
import type { TenantRow } from './store.ts';
import type { ListCache } from './list.cache.ts';

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
  SORT_SQL[sortBy]
    .map((expr, i) => (expr === 'tenant_id' ? null : `${expr} AS k${i}`))
    .filter((c): c is string => c !== null);
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
 * Given a `cache`, a filter the trigram index cannot serve, or one it serves that was last counted above the cache's
 * `broadMatches` (and no `tenantIds`), is answered by `listFromCache`.
 */
export async function listAccounts(
  db: Queryable,
  p: ListParams,
  cache?: ListCache,
): Promise<{ rows: TenantRow[]; total: number }> {
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

  if (cache && p.filter && !p.tenantIds && (!servedByTrigramIndex(p.filter) || cache.isBroad(p.filter))) {
    const cached = await listFromCache(db, cache, p, whereSql, params);
    if (cached) return cached;
  }

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
    // A filter that matched many accounts is read from the cache next time (ListCacheLimits.broadMatches).
    if (cache && p.filter && !p.tenantIds) cache.counted(p.filter, total);
    return {
      rows: rows.filter((r) => r.tenant_id !== null).map(({ total: _total, ...row }) => row as TenantRow),
      total,
    };
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

/**
 * Whether pg_trgm can narrow a LIKE on this filter: it extracts trigrams from runs of letters and digits, so a filter
 * without three of them in a row (`an`, `a-b`, `%`) reads every live account whatever the index.
 */
export const servedByTrigramIndex = (filter: string) => /[\p{L}\p{N}]{3}/u.test(filter);

/** The data version (migration 0027) as text, in the statement that reads a page, so both come from one snapshot. */
const VERSION_SQL = 'SELECT coalesce(sum(changes), 0)::text AS version FROM tenant_live_count';
/** The rows of the ids in `ids` (an array expression), in the array's order, joined to the version. */
const pageSql = (ids: string) =>
  `LEFT JOIN LATERAL (SELECT o.ord, t.* FROM unnest(${ids}) WITH ORDINALITY AS o(id, ord) JOIN tenants t ON t.tenant_id = o.id) p ON true
   ORDER BY p.ord`;
/** How long a list too large to cache (or holding an id with chr(1)) is read the uncached way before trying again. */
const UNCACHED_RETRY_MS = 60_000;
type PageRow = TenantRow & { version: string; ord: number | null; ids?: string | null; n?: number };
const tenantRows = (rows: PageRow[]) =>
  rows.filter((r) => r.ord !== null).map(({ version: _v, ord: _o, ids: _i, n: _n, ...row }) => row as TenantRow);

/**
 * A broad filter from the ordered ids of its matches, read once per data version and kept in `cache`. A hit is one
 * statement: the version and the page's rows by id; it is served when the version is the cached one. Otherwise one
 * statement reads the version, every match's id in the list's order and the page's rows (all from one snapshot) and
 * the ids are cached for the next pages; a request that misses while the same list is being read waits for that
 * read instead. Undefined when the list is too large to cache (the caller reads the page as before).
 */
async function listFromCache(
  db: Queryable,
  cache: ListCache,
  p: ListParams,
  whereSql: string,
  params: unknown[],
): Promise<{ rows: TenantRow[]; total: number } | undefined> {
  const key = JSON.stringify([params[0], p.sortBy, p.order]);
  const from = p.page * p.limit;
  const fromEntry = async () => {
    const entry = cache.get(key);
    if (!entry?.ids) return entry && Date.now() - entry.at < UNCACHED_RETRY_MS ? ('uncached' as const) : undefined;
    const { rows } = await db.query<PageRow>(`SELECT v.version, p.* FROM (${VERSION_SQL}) v ${pageSql('$1::text[]')}`, [
      entry.ids.slice(from, from + p.limit),
    ]);
    return rows[0].version === entry.version ? { rows: tenantRows(rows), total: entry.ids.length } : undefined;
  };
  let hit = await fromEntry();
  // Requests that miss while this server is already reading the same list wait for it rather than read it again.
  const reading = cache.reading.get(key);
  if (hit === undefined && reading) hit = await reading.then(fromEntry);
  if (hit === 'uncached') return undefined;
  if (hit) return hit;
  const read = readList(db, cache, key, p, whereSql, params);
  const done = read.then(
    () => undefined,
    () => undefined,
  );
  cache.reading.set(key, done);
  try {
    return await read;
  } finally {
    if (cache.reading.get(key) === done) cache.reading.delete(key);
  }
}

/** Reads (and keeps) every match id of a broad filter in the list's order, with the page's rows. */
async function readList(
  db: Queryable,
  cache: ListCache,
  key: string,
  p: ListParams,
  whereSql: string,
  params: unknown[],
): Promise<{ rows: TenantRow[]; total: number }> {
  const from = p.page * p.limit;
  const keys = ['tenant_id', ...keyColumns(p.sortBy)].join(', ');
  // The ids travel as one string joined by chr(1), which parses in a fraction of the time a 30,000-element array
  // does; an id holding chr(1) (the API never writes one) shows as a count that differs, and is then not cached.
  const { rows } = await db.query<PageRow>(
    `WITH m AS (SELECT coalesce(array_agg(m.tenant_id ORDER BY ${keyOrder(p.sortBy, p.order, 'm')}), '{}') AS ids
                  FROM (SELECT ${keys} FROM tenants WHERE ${whereSql}) m)
     SELECT v.version, cardinality(m.ids) AS n, CASE WHEN p.ord IS NULL OR p.ord = 1 THEN array_to_string(m.ids, chr(1)) END AS ids, p.*
       FROM (${VERSION_SQL}) v CROSS JOIN m ${pageSql(`m.ids[${from + 1}:${from + p.limit}]`)}`,
    params,
  );
  const total = Number(rows[0].n);
  const ids = total === 0 ? [] : (rows[0].ids ?? '').split('\u0001');
  cache.set(key, { version: rows[0].version, ids: ids.length === total ? ids : null, at: Date.now() });
  return { rows: tenantRows(rows), total };
}
