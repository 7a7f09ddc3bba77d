/**
 * A/B of the account list queries: the listAccounts of src/modules/tenants/list.store.ts against the version before
 * the benchmark work (kept below as `previous`), called alternately on the same database so that other load on the
 * machine affects both alike. Database time only (no HTTP). 100,000 accounts as in the tenants benchmark.
 *
 *   npx tsx bench/list-ab.ts [--store pglite|postgres] [--n 60]
 *
 * The previous version also ran without migration 0007 (name index without INCLUDE (name)); here both run with it.
 * Two more columns for the list cache of broad filters (list.cache.ts): `cached`, listAccounts with a warm cache (a
 * hit: the version and the page's rows by id), and `miss`, with an empty cache each call (reads and keeps every id).
 */
import type { Queryable } from '../src/storage/db.ts';
import { listAccounts, type ListParams } from '../src/modules/tenants/list.store.ts';
import { ListCache } from '../src/modules/tenants/list.cache.ts';
import type { TenantRow } from '../src/modules/tenants/store.ts';
import { ms, openBenchDb, stats, type StoreKind } from './lib.ts';
import { seedAccounts } from './tenants.ts';

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const PREVIOUS_SORT: Record<ListParams['sortBy'], string[]> = {
  createdAt: ['created_at', 'tenant_id'],
  name: ['(lower(name) COLLATE "C")', 'tenant_id'],
  tenantId: ['tenant_id'],
};

/** list.store.ts as it was before: count, then the page with SELECT * ... ORDER BY ... LIMIT ... OFFSET. */
async function previous(db: Queryable, p: ListParams): Promise<{ rows: TenantRow[]; total: number }> {
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
  const { rows: countRows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tenants WHERE ${whereSql}`,
    params,
  );
  const total = countRows[0].n;
  const offset = p.page * p.limit;
  if (offset >= total) return { rows: [], total };
  const fromEnd = offset > total / 2;
  const dir = fromEnd ? (p.order === 'ASC' ? 'DESC' : 'ASC') : p.order;
  const limit = fromEnd ? Math.min(p.limit, total - offset) : p.limit;
  const skip = fromEnd ? Math.max(total - offset - p.limit, 0) : offset;
  const orderSql = PREVIOUS_SORT[p.sortBy].map((c) => `${c} ${dir}`).join(', ');
  const { rows } = await db.query<TenantRow>(
    `SELECT * FROM tenants WHERE ${whereSql} ORDER BY ${orderSql} LIMIT ${limit} OFFSET ${skip}`,
    params,
  );
  return { rows: fromEnd ? rows.reverse() : rows, total };
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}

const store = arg('store', 'pglite') as StoreKind;
const n = Number(arg('n', '60'));
const b = await openBenchDb(store, 'ab');
try {
  await seedAccounts(b.db, 100_000);
  const cases: [string, ListParams][] = [];
  for (const sortBy of ['createdAt', 'name', 'tenantId'] as const) {
    cases.push([`${sortBy} first`, { limit: 50, page: 0, sortBy, order: 'ASC' }]);
    cases.push([`${sortBy} middle`, { limit: 50, page: 1000, sortBy, order: 'ASC' }]);
  }
  cases.push([
    'filter selective first',
    { limit: 50, page: 0, sortBy: 'createdAt', order: 'ASC', filter: '733c0461-fed5' },
  ]);
  cases.push(['filter broad first', { limit: 50, page: 0, sortBy: 'createdAt', order: 'ASC', filter: 'an' }]);
  cases.push(['filter broad middle', { limit: 50, page: 302, sortBy: 'createdAt', order: 'ASC', filter: 'an' }]);
  const phases = store === 'pglite' ? ['never analyzed', 'after VACUUM ANALYZE'] : ['after VACUUM ANALYZE'];
  console.log(`${store}: database time of listAccounts, ${n} alternating calls per version (p50 ms)`);
  console.log(
    [
      'phase'.padEnd(22),
      'case'.padEnd(24),
      'previous'.padStart(9),
      'current'.padStart(9),
      'cached'.padStart(9),
      'miss'.padStart(9),
    ].join(' '),
  );
  for (const phase of phases) {
    if (phase !== 'never analyzed') await b.db.query('VACUUM ANALYZE tenants');
    for (const [label, p] of cases) {
      const a = JSON.stringify(await previous(b.db, p));
      const c = JSON.stringify(await listAccounts(b.db, p));
      const cache = new ListCache();
      const cm = JSON.stringify(await listAccounts(b.db, p, cache));
      const ch = JSON.stringify(await listAccounts(b.db, p, cache));
      if (a !== c || a !== cm || a !== ch) throw new Error(`${label}: the versions answer differently`);
      const times: number[][] = [[], [], [], []];
      const calls = [
        () => previous(b.db, p),
        () => listAccounts(b.db, p),
        () => listAccounts(b.db, p, cache),
        () => listAccounts(b.db, p, new ListCache()),
      ];
      for (let i = 0; i < n; i++) {
        for (const [k, call] of calls.entries()) {
          const s = performance.now();
          await call();
          times[k].push(performance.now() - s);
        }
      }
      console.log(
        [phase.padEnd(22), label.padEnd(24), ...times.map((t) => String(ms(stats(t).p50)).padStart(9))].join(' '),
      );
    }
  }
} finally {
  await b.destroy();
}
