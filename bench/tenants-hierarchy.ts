import { randomUUID } from 'node:crypto';
import type { NewTenant } from '../src/modules/tenants/index.ts';
// The store's statement itself: the seed writes raw rows, without the service's events and creation hooks.
import { insertAccounts } from '../src/modules/tenants/store.ts';
import type { Db } from '../src/storage/db.ts';
import { measure, type BenchApp, type BenchOptions, type stats } from './lib.ts';
import { DEPTH, HIERARCHY, type Sizes } from './tenants-config.ts';
import { INDUSTRIES, NOUNS } from './tenants-seed.ts';

// ---------------------------------------------------------------------------------------------------------------
// 2. Hierarchy

/** Level sizes s0..s20 (s0 = 1 root) growing geometrically, non-decreasing, summing to n. */
export function levelSizes(n: number, depth = DEPTH): number[] {
  const sum = (g: number) => Array.from({ length: depth + 1 }, (_, l) => g ** l).reduce((a, b) => a + b, 0);
  let lo = 1;
  let hi = 10;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (sum(mid) < n) lo = mid;
    else hi = mid;
  }
  const sizes = [1];
  for (let l = 1; l <= depth; l++) sizes.push(Math.max(sizes[l - 1], Math.round(lo ** l)));
  const rest = sizes.slice(0, depth).reduce((a, b) => a + b, 0);
  sizes[depth] = n - rest;
  if (sizes[depth] < sizes[depth - 1]) throw new Error(`cannot build ${n} accounts ${depth} levels deep`);
  return sizes;
}

/**
 * One tree of n accounts, every leaf at level 20 (so every account above level 20 has children): node j of level l
 * hangs under node floor(j·s(l-1)/s(l)) of level l-1. Inserted with the accounts module's insertAccounts, parents first.
 */
export async function seedTree(
  db: Db,
  prefix: string,
  n: number,
): Promise<{ sizes: number[]; id: (level: number, j: number) => string; ms: number }> {
  const sizes = levelSizes(n);
  const id = (level: number, j: number) => `${prefix}-l${level}-${j}`;
  const rows: NewTenant[] = [];
  for (let l = 0; l < sizes.length; l++) {
    for (let j = 0; j < sizes[l]; j++) {
      const parent = l === 0 ? null : id(l - 1, Math.floor((j * sizes[l - 1]) / sizes[l]));
      rows.push({
        tenant_id: id(l, j),
        id: randomUUID(),
        parent_tenant_id: parent,
        metadata: {},
        is_reseller: l < DEPTH,
        name: `${NOUNS[(l * 7 + j) % NOUNS.length]} ${INDUSTRIES[(l + j * 3) % INDUSTRIES.length]} ${l}.${j}`,
      });
    }
  }
  const start = performance.now();
  for (let i = 0; i < rows.length; i += 2000) await insertAccounts(db, rows.slice(i, i + 2000));
  return { sizes, id, ms: performance.now() - start };
}

function countTree(node: { children: unknown[] }): number {
  return 1 + (node.children as { children: unknown[] }[]).reduce((a, c) => a + countTree(c), 0);
}

export interface HierarchyRow {
  dataset: string;
  totalAccounts: number;
  call: string;
  account: string;
  answer: number;
  bytes: number;
  stats: ReturnType<typeof stats>;
}

export async function measureHierarchy(
  app: BenchApp,
  dataset: string,
  totalAccounts: number,
  tree: Awaited<ReturnType<typeof seedTree>>,
  sizes: Sizes,
  opts: BenchOptions,
): Promise<HierarchyRow[]> {
  const out: HierarchyRow[] = [];
  const leaf = tree.id(DEPTH, tree.sizes[DEPTH] - 1);
  const calls: { call: string; path: string; account: string; answer: (b: any) => number }[] = [
    { call: 'parents of a leaf (level 20)', path: `${HIERARCHY}/parents`, account: leaf, answer: (b) => b.length },
    { call: 'tree of level 19', path: `${HIERARCHY}/tree`, account: tree.id(19, 0), answer: countTree },
    { call: 'tree of level 15', path: `${HIERARCHY}/tree`, account: tree.id(15, 0), answer: countTree },
    { call: 'tree of level 10 (mid-level)', path: `${HIERARCHY}/tree`, account: tree.id(10, 0), answer: countTree },
    { call: 'tree of the root', path: `${HIERARCHY}/tree`, account: tree.id(0, 0), answer: countTree },
  ];
  for (const c of calls) {
    const headers = { 'gatehouse-tenant-id': c.account };
    const first = await app.client.request('GET', c.path, { headers });
    if (first.status !== 200)
      throw new Error(`${c.call}: HTTP ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`);
    const answer = c.answer(first.body);
    if (c.call.startsWith('parents') && answer !== DEPTH)
      throw new Error(`parents of a leaf: expected ${DEPTH} entries, got ${answer}`);
    const s = await measure(() => app.client.request('GET', c.path, { headers }), {
      n: sizes.requests,
      budgetMs: sizes.caseBudgetMs,
      minN: sizes.minN,
      check: (r) => {
        if (r.status !== 200) throw new Error(`${c.call}: HTTP ${r.status}`);
      },
    });
    const { samples: _s, ...summary } = s;
    opts.log(
      `    ${dataset.padEnd(26)} ${c.call.padEnd(30)} answer ${String(answer).padStart(6)}  p50 ${s.p50.toFixed(2).padStart(8)} ms  p99 ${s.p99.toFixed(2).padStart(8)} ms (n=${s.n})`,
    );
    out.push({ dataset, totalAccounts, call: c.call, account: c.account, answer, bytes: first.bytes, stats: summary });
  }
  return out;
}
