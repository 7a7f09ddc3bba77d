import { GET_USER, type IdentityApp, type Sizes } from './identity-config.ts';
import { closedLoop } from './identity-loops.ts';
import { seededUserId } from './identity-seed.ts';
import type { timingDb } from './identity-statements.ts';
import { explainAnalyze, stats, type BenchOptions, type HttpClient } from './lib.ts';
import { cpuProfile } from './profile.ts';

// ---------------------------------------------------------------------------------------------------------------
// 3. Get user by id

export async function measureGetUser(
  app: IdentityApp,
  timing: ReturnType<typeof timingDb>,
  users: number,
  sizes: Sizes,
  opts: BenchOptions,
  phase: string,
) {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return 1 + (seed % users);
  };
  const get = async (c: HttpClient) => {
    const id = seededUserId(rnd());
    const r = await c.request('GET', `${GET_USER}/${id}`);
    if (r.status !== 200 || r.body.id !== id)
      throw new Error(`get user ${id}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r;
  };
  for (let i = 0; i < 20; i++) await get(app.client);
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < sizes.getUserRequests) {
    samples.push((await get(app.client)).ms);
    if (samples.length >= 200 && performance.now() - start > sizes.getUserBudgetMs) break;
  }
  const latency = stats(samples);
  const clients = Array.from({ length: sizes.getUserConcurrency }, () => app.newClient(app.vendorToken));
  const throughput = await closedLoop(
    sizes.getUserConcurrency,
    1000,
    sizes.getUserThroughputMs,
    async (w) => void (await get(clients[w])),
  );
  const breakdown = await timing.breakdown(sizes.breakdownRequests, () => get(app.client));
  const profiled = await cpuProfile(() =>
    closedLoop(sizes.getUserConcurrency, 0, sizes.profileMs, async (w) => void (await get(clients[w]))),
  );
  let plans: { sql: string; params: unknown[]; plan: string[] }[] | undefined;
  if (opts.explain) {
    plans = [];
    for (const s of breakdown.example)
      plans.push({ sql: s.sql, params: s.params, plan: await explainAnalyze(app.ctx.db, s) });
  }
  opts.log(
    `    ${phase}: p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms (n=${latency.n}); ${throughput.perSecond.toFixed(0)} req/s at ${sizes.getUserConcurrency} in flight; ` +
      `${breakdown.statementsPerCall.toFixed(1)} statements, ${breakdown.dbMsPerCall.toFixed(2)} ms of ${breakdown.httpMsPerCall.toFixed(2)} ms in them`,
  );
  return {
    phase,
    latency,
    throughput,
    breakdown: { ...breakdown, example: undefined },
    profile: profiled.profile,
    profileOps: profiled.result.ops,
    plans,
  };
}
