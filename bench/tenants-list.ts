import type { Db } from '../src/storage/db.ts';
import {
  explainAnalyze,
  measure,
  ms,
  type BenchApp,
  type BenchOptions,
  type HttpReply,
  type recordingDb,
  type stats,
  type Table,
} from './lib.ts';
import { LIST, LIST_TARGET_MS, type Sizes } from './tenants-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// 1. List pages

export interface ListCase {
  name: string;
  query: Record<string, string>;
  /** Expected totalItems (checked on every reply). */
  total: number;
  page: number;
  expectItems: number;
  /** Each timed request follows an untimed write to `tenants`, so a broad filter misses its list cache every time. */
  afterWrite?: boolean;
}

export function listCases(
  total: number,
  filters: { label: string; filter: string; total: number }[],
  limit = 50,
): ListCase[] {
  const cases: ListCase[] = [];
  const pagesFor = (n: number) => {
    const pages = Math.ceil(n / limit);
    const out: [string, number][] = [['first', 0]];
    if (pages > 2) out.push(['middle', Math.floor(pages / 2)]);
    if (pages > 1) out.push(['last', pages - 1]);
    return out;
  };
  const itemsOn = (n: number, page: number) => Math.max(0, Math.min(limit, n - page * limit));
  for (const sortBy of ['createdAt', 'name', 'tenantId']) {
    for (const order of ['ASC', 'DESC']) {
      for (const [label, page] of pagesFor(total)) {
        cases.push({
          name: `${sortBy} ${order} ${label} (p${page})`,
          query: { _sortBy: sortBy, _order: order, _offset: String(page), _limit: String(limit) },
          total,
          page,
          expectItems: itemsOn(total, page),
        });
      }
    }
  }
  for (const f of filters) {
    for (const [label, page] of pagesFor(f.total)) {
      cases.push({
        name: `filter ${f.label} "${f.filter}" ${label} (p${page})`,
        query: { _filter: f.filter, _sortBy: 'createdAt', _order: 'ASC', _offset: String(page), _limit: String(limit) },
        total: f.total,
        page,
        expectItems: itemsOn(f.total, page),
      });
    }
  }
  // A broad filter is served from its cached id list (src/modules/tenants/list.cache.ts) once read; these cases
  // measure the read that fills it: the first request after any account write.
  for (const f of filters.filter((x) => x.label === 'broad')) {
    for (const [label, page] of pagesFor(f.total)) {
      const query = {
        _filter: f.filter,
        _sortBy: 'createdAt',
        _order: 'ASC',
        _offset: String(page),
        _limit: String(limit),
      };
      cases.push({
        name: `filter ${f.label} "${f.filter}" ${label} (p${page}), after a write`,
        query,
        total: f.total,
        page,
        expectItems: itemsOn(f.total, page),
        afterWrite: true,
      });
    }
  }
  return cases;
}

export async function filterTotal(db: Db, filter: string): Promise<number> {
  const pattern = `%${filter.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM tenants WHERE deleted_at IS NULL AND (lower(name) LIKE $1 OR lower(tenant_id) LIKE $1)',
    [pattern],
  );
  return rows[0].n;
}

export async function measureList(
  app: BenchApp,
  cases: ListCase[],
  sizes: Sizes,
  opts: BenchOptions,
  explain?: { db: Db; record: ReturnType<typeof recordingDb>['record'] },
  write?: () => Promise<unknown>,
) {
  const results: {
    case: ListCase;
    stats: ReturnType<typeof stats>;
    plans?: { sql: string; params: unknown[]; plan: string[] }[];
  }[] = [];
  for (const c of cases) {
    const path = `${LIST}?${new URLSearchParams(c.query).toString()}`;
    const check = (r: HttpReply) => {
      if (r.status !== 200) throw new Error(`${c.name}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      if (r.body._metadata.totalItems !== c.total || r.body.items.length !== c.expectItems) {
        throw new Error(
          `${c.name}: expected ${c.expectItems} of ${c.total}, got ${r.body.items.length} of ${r.body._metadata.totalItems}`,
        );
      }
    };
    const request = () => app.client.request('GET', path);
    const timed = c.afterWrite && write ? async () => (await write(), request()) : request;
    const s = await measure(timed, { n: sizes.requests, budgetMs: sizes.caseBudgetMs, minN: sizes.minN, check });
    const { samples: _samples, ...summary } = s;
    let plans: { sql: string; params: unknown[]; plan: string[] }[] | undefined;
    if (explain && !c.afterWrite) {
      const { statements } = await explain.record(() => app.client.request('GET', path));
      plans = [];
      for (const st of statements.filter((x) => /\bFROM tenants\b/.test(x.sql)))
        plans.push({ ...st, plan: await explainAnalyze(explain.db, st) });
    }
    opts.log(
      `    ${c.name.padEnd(44)} p50 ${s.p50.toFixed(2).padStart(8)} ms  p99 ${s.p99.toFixed(2).padStart(8)} ms  (n=${s.n})`,
    );
    results.push({ case: c, stats: summary, plans });
  }
  return results;
}

export function listTable(title: string, results: Awaited<ReturnType<typeof measureList>>, notes: string[]): Table {
  return {
    title,
    columns: ['case', 'items', 'total', 'n', 'p50 ms', 'p99 ms', `p50 < ${LIST_TARGET_MS} ms`],
    rows: results.map((r) => [
      r.case.name,
      r.case.expectItems,
      r.case.total,
      r.stats.n,
      ms(r.stats.p50),
      ms(r.stats.p99),
      r.stats.p50 < LIST_TARGET_MS ? 'met' : 'MISSED',
    ]),
    notes,
  };
}
