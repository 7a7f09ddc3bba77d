import { PASSWORD, SIGNIN } from './identity-config.ts';
import { closedLoop, type LoopResult } from './identity-loops.ts';
import type { timingDb } from './identity-statements.ts';
import { Browser, exchange, frontChannel, type Client } from './frontdoor-flow.ts';
import type { BenchApp, BenchOptions, HttpReply } from './lib.ts';
import { cpuProfile } from './profile.ts';

/**
 * 1. The whole code flow of a new visitor (front channel with the hosted sign-in page, then the code exchange) against
 * the password sign-in API, same users, same concurrency, interleaved rounds: both are bound by argon2id.
 */

export interface FlowSizes {
  concurrency: number[];
  rounds: number;
  roundMs: number;
  warmupMs: number;
  breakdown: number;
  profileMs: number;
}

export interface FlowRound {
  concurrency: number;
  round: number;
  api: LoopResult;
  flow: LoopResult;
}

export async function measureFlow(
  app: BenchApp,
  publicOrigin: string,
  client: Client,
  emails: string[],
  timing: ReturnType<typeof timingDb>,
  sizes: FlowSizes,
  log: BenchOptions['log'],
) {
  const maxC = Math.max(...sizes.concurrency);
  const apiClients = Array.from({ length: maxC }, () => app.newClient());
  const browsers = Array.from({ length: maxC }, () => new Browser(app.baseUrl, publicOrigin));
  let requestsPerFlow = 0;
  const apiSignin = async (w: number) => {
    const r = await apiClients[w].request('POST', SIGNIN, { body: { email: emails[w], password: PASSWORD } });
    if (r.status !== 200 || !r.body.accessToken) throw new Error(`sign-in: HTTP ${r.status}`);
    return r;
  };
  // A new visitor every time: no cookies (one keep-alive connection per worker, as a browser keeps one).
  const flow = async (w: number) => {
    const b = browsers[w];
    b.cookies.clear();
    const f = await frontChannel(b, client, emails[w], PASSWORD);
    await exchange(b, client, f.code, f.verifier);
    requestsPerFlow = f.requests + 1;
  };
  await flow(0);
  await apiSignin(0);
  const rounds: FlowRound[] = [];
  for (const c of sizes.concurrency) {
    for (let round = 1; round <= sizes.rounds; round++) {
      const api = await closedLoop(c, sizes.warmupMs, sizes.roundMs, async (w) => void (await apiSignin(w)));
      const fl = await closedLoop(c, sizes.warmupMs, sizes.roundMs, flow);
      rounds.push({ concurrency: c, round, api, flow: fl });
      log(
        `    concurrency ${c} round ${round}: API sign-in ${api.perSecond.toFixed(1)}/s (p50 ${api.latency.p50.toFixed(0)} ms, ${api.cpuMsPerOp.toFixed(1)} ms CPU), code flow ${fl.perSecond.toFixed(1)}/s (p50 ${fl.latency.p50.toFixed(0)} ms, ${fl.cpuMsPerOp.toFixed(1)} ms CPU): ${((fl.perSecond / api.perSecond) * 100).toFixed(1)} %`,
      );
    }
  }
  // Statements of one flow and of one API sign-in, sequential.
  const timed = async (fn: () => Promise<unknown>): Promise<HttpReply> => {
    const s = performance.now();
    await fn();
    return { status: 200, body: undefined, ms: performance.now() - s, bytes: 0 };
  };
  const flowBreakdown = await timing.breakdown(sizes.breakdown, () => timed(() => flow(0)));
  const apiBreakdown = await timing.breakdown(sizes.breakdown, () => apiSignin(0));
  const profiled = await cpuProfile(() => closedLoop(maxC, 0, sizes.profileMs, flow));
  log(
    `    one code flow: ${requestsPerFlow} requests, ${flowBreakdown.statementsPerCall.toFixed(1)} statements (${flowBreakdown.dbMsPerCall.toFixed(1)} ms in them of ${flowBreakdown.httpMsPerCall.toFixed(1)} ms); API sign-in: ${apiBreakdown.statementsPerCall.toFixed(1)} statements`,
  );
  for (const c of apiClients) c.close();
  for (const b of browsers) b.close();
  return {
    rounds,
    requestsPerFlow,
    flowBreakdown,
    apiBreakdown,
    profile: profiled.profile,
    profileOps: profiled.result.ops,
    profileConcurrency: maxC,
  };
}

/** Operations per second over all rounds of one concurrency. */
export const rateOf = (rs: FlowRound[], pick: (r: FlowRound) => LoopResult) =>
  rs.reduce((a, r) => a + pick(r).ops, 0) / rs.reduce((a, r) => a + pick(r).seconds, 0);
