import { verify as argon2Verify } from '@node-rs/argon2';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { createLimiter } from '../src/lib/limiter.ts';
import { httpClient } from './lib-http.ts';
import { productionLikeLogger } from './loadgen.ts';
import { PASSWORD, SIGNIN, type IdentityApp, type Sizes } from './identity-config.ts';
import { closedLoop, type LoopResult } from './identity-loops.ts';
import type { timingDb } from './identity-statements.ts';
import type { BenchOptions } from './lib.ts';
import { cpuProfile } from './profile.ts';

// ---------------------------------------------------------------------------------------------------------------
// 1. Sign-in against raw argon2id verification

export interface SigninRound {
  concurrency: number;
  round: number;
  raw: LoopResult;
  /** Raw verifications with as many in flight as the machine has CPUs: the hash's best rate here (the floor). */
  rawAtCpus: LoopResult;
  signin: LoopResult;
  /** The floor: a bare Fastify route that only verifies the password (same bound, same client), no database, no token. */
  floor: LoopResult;
}

/**
 * What HTTP alone costs on top of the hash on this machine: a bare Fastify app (the server's logger, no hooks, no
 * database, no token) whose one route parses the sign-in body, verifies the password with argon2id through the same
 * CPU bound as the server (PASSWORD_HASH_CONCURRENCY's default) and answers a canned body of a login response's size.
 * Its rate against raw argon2id is the ceiling any sign-in can reach here: the platform's own work comes on top.
 */
async function startFloor(hash: string, replyBytes: number) {
  const app = Fastify({ loggerInstance: productionLikeLogger() });
  const limit = createLimiter(availableParallelism());
  const body = JSON.stringify({ accessToken: 'x'.repeat(Math.max(0, replyBytes - 20)) });
  app.post<{ Body: { email: string; password: string } }>('/floor', async (req, reply) => {
    if (!(await limit.run(() => argon2Verify(hash, req.body.password))))
      return reply.status(401).send({ error: 'wrong password' });
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/** The raw rate a sign-in rate is compared with: the better of raw at the same concurrency and raw at the CPU count. */
export const bestRaw = (r: Pick<SigninRound, 'raw' | 'rawAtCpus'>) => Math.max(r.raw.perSecond, r.rawAtCpus.perSecond);

export async function measureSignin(
  app: IdentityApp,
  timing: ReturnType<typeof timingDb>,
  users: { emails: string[]; hash: string },
  sizes: Sizes,
  log: BenchOptions['log'],
) {
  const rounds: SigninRound[] = [];
  const maxC = Math.max(...sizes.signinConcurrency);
  const clients = Array.from({ length: maxC }, () => app.newClient());
  const signin = (w: number) => async () => {
    const r = await clients[w].request('POST', SIGNIN, { body: { email: users.emails[w], password: PASSWORD } });
    if (r.status !== 200 || !r.body.accessToken)
      throw new Error(`sign-in: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  };
  const raw = async () => {
    if (!(await argon2Verify(users.hash, PASSWORD))) throw new Error('argon2 verify answered false');
  };
  const sample = await clients[0].request('POST', SIGNIN, { body: { email: users.emails[0], password: PASSWORD } });
  const floorApp = await startFloor(users.hash, sample.bytes);
  const floorClients = Array.from({ length: maxC }, () => httpClient(floorApp.baseUrl));
  const floor = (w: number) => async () => {
    const r = await floorClients[w].request('POST', '/floor', { body: { email: users.emails[w], password: PASSWORD } });
    if (r.status !== 200) throw new Error(`floor: HTTP ${r.status}`);
  };
  for (const c of sizes.signinConcurrency) {
    for (let round = 1; round <= sizes.signinRounds; round++) {
      // Interleaved: raw, then sign-in, every round, so drift in machine load hits both sides alike. Raw is measured at
      // the same concurrency and at the CPU count: the server bounds its own hashing to the CPUs
      // (PASSWORD_HASH_CONCURRENCY), so the honest floor is the better of the two raw rates.
      const r = await closedLoop(c, sizes.signinWarmupMs, sizes.signinRoundMs, () => raw());
      const cpus = availableParallelism();
      const rc = c === cpus ? r : await closedLoop(cpus, sizes.signinWarmupMs, sizes.signinRoundMs, () => raw());
      const s = await closedLoop(c, sizes.signinWarmupMs, sizes.signinRoundMs, (w) => signin(w)());
      const f = await closedLoop(c, sizes.signinWarmupMs, sizes.signinRoundMs, (w) => floor(w)());
      const round_ = { concurrency: c, round, raw: r, rawAtCpus: rc, signin: s, floor: f };
      rounds.push(round_);
      log(
        `    concurrency ${c} round ${round}: raw argon2id ${r.perSecond.toFixed(1)}/s (${r.cpuMsPerOp.toFixed(1)} ms CPU each; ${rc.perSecond.toFixed(1)}/s at ${cpus} in flight), sign-in ${s.perSecond.toFixed(1)}/s (${s.cpuMsPerOp.toFixed(1)} ms CPU each): ${((s.perSecond / bestRaw(round_)) * 100).toFixed(1)} % of the better raw, sign-in p50 ${s.latency.p50.toFixed(1)} ms; HTTP + argon2 floor ${f.perSecond.toFixed(1)}/s (${f.cpuMsPerOp.toFixed(1)} ms CPU each): ${((f.perSecond / bestRaw(round_)) * 100).toFixed(1)} %`,
      );
    }
  }
  for (const fc of floorClients) fc.close();
  await floorApp.app.close();
  const breakdown = await timing.breakdown(sizes.signinBreakdown, async () => {
    const r = await clients[0].request('POST', SIGNIN, { body: { email: users.emails[0], password: PASSWORD } });
    if (r.status !== 200) throw new Error(`sign-in: HTTP ${r.status}`);
    return r;
  });
  // One at a time, each thread's CPU: what a sign-in costs besides argon2, and what argon2 costs when real work runs
  // between verifications (a raw loop keeps its 19 MiB working set warm in the caches).
  const sequential = {
    raw: await closedLoop(1, 300, sizes.sequentialMs, () => raw()),
    signin: await closedLoop(1, 300, sizes.sequentialMs, () => signin(0)()),
  };
  log(
    `    one at a time: raw verify ${sequential.raw.cpuMsPerOp.toFixed(1)} ms CPU (other threads ${sequential.raw.otherCpuMsPerOp.toFixed(1)}), sign-in ${sequential.signin.cpuMsPerOp.toFixed(1)} ms (main thread ${sequential.signin.mainCpuMsPerOp.toFixed(1)}, other threads ${sequential.signin.otherCpuMsPerOp.toFixed(1)})`,
  );
  const c = Math.max(...sizes.signinConcurrency);
  const profiled = await cpuProfile(() => closedLoop(c, 0, sizes.profileMs, (w) => signin(w)()));
  log(
    `    sign-in: ${breakdown.statementsPerCall.toFixed(1)} statements, ${breakdown.dbMsPerCall.toFixed(2)} ms in them of ${breakdown.httpMsPerCall.toFixed(2)} ms (sequential); main thread ${(profiled.profile.busyMs / profiled.result.ops).toFixed(2)} ms per sign-in at ${c} in flight`,
  );
  return {
    rounds,
    sequential,
    breakdown,
    profile: profiled.profile,
    profileOps: profiled.result.ops,
    profileConcurrency: c,
  };
}
