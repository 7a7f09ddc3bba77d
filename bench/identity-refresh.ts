import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { importPKCS8, SignJWT, type JWTPayload } from 'jose';
import { decrypt, keyFromString } from '../src/lib/crypto.ts';
import { PASSWORD, REFRESH, SIGNIN, type IdentityApp, type Sizes } from './identity-config.ts';
import { closedLoop, type LoopResult } from './identity-loops.ts';
import type { timingDb } from './identity-statements.ts';
import { BENCH_ENCRYPTION_KEY, type BenchOptions, type HttpReply } from './lib.ts';
import { onCpus, productionLikeLogger, type LoadGenerator, type LoadOp, type LoadResult } from './loadgen.ts';
import { cpuProfile } from './profile.ts';

// ---------------------------------------------------------------------------------------------------------------
// 2. Refresh

export interface RefreshRun {
  alg: string;
  cpus: string;
  pinned: boolean;
  sessions: number;
  loop: LoopResult;
  /** The load generator's view: server CPU share, client CPU, database CPU per refresh. */
  extra?: LoadResult;
}

/** Signs in once per session; each session becomes a load-generator op that rotates its own refresh-token chain. */
async function refreshChains(app: IdentityApp, emails: string[], sessions: number): Promise<LoadOp[]> {
  const ops: LoadOp[] = [];
  for (let w = 0; w < sessions; w++) {
    const r = await app.client.request('POST', SIGNIN, {
      body: { email: emails[w % emails.length], password: PASSWORD },
    });
    if (r.status !== 200) throw new Error(`sign-in: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    ops.push({
      method: 'POST',
      path: REFRESH,
      body: { refreshToken: r.body.refreshToken },
      expect: 201,
      chain: { from: 'refreshToken', to: 'refreshToken' },
    });
  }
  return ops;
}

/** The PostgreSQL backends serving the app's database (their CPU is reported per refresh); none on PGlite. */
async function databasePids(app: IdentityApp, store: string): Promise<number[]> {
  if (store !== 'postgres') return [];
  const { rows } = await app.ctx.db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  return rows.map((r) => Number(r.pid));
}

const loopOf = (r: LoadResult): LoopResult => ({
  workers: r.workers,
  ops: r.ops,
  seconds: r.seconds,
  perSecond: r.perSecond,
  latency: r.latency,
  cpuMsPerOp: r.cpuMsPerOp,
  mainCpuMsPerOp: r.mainCpuMsPerOp,
  otherCpuMsPerOp: r.otherCpuMsPerOp,
});

/**
 * Refreshes driven by the load generator (another process, on CPU 1) against the app in this process, pinned to CPU 0
 * while a window runs: the server's CPU per refresh is the server's alone.
 */
export async function measureRefresh(
  app: IdentityApp,
  gen: LoadGenerator,
  store: string,
  timing: ReturnType<typeof timingDb>,
  emails: string[],
  alg: string,
  sizes: Sizes,
  log: BenchOptions['log'],
  alsoUnpinned: boolean,
) {
  const runs: RefreshRun[] = [];
  const ops = await refreshChains(app, emails, sizes.refreshSessions);
  const window = async (serverCpus: string | undefined, warmupMs: number, durationMs: number) =>
    gen.run({ baseUrl: app.baseUrl, warmupMs, durationMs, ops, serverCpus, watchPids: await databasePids(app, store) });
  const pinned = await window('0', sizes.refreshWarmupMs, sizes.refreshMs);
  const isPinned = pinned.serverCpus === '0' && gen.pinned;
  runs.push({
    alg,
    cpus: isPinned ? `1 (taskset -c 0; clients on CPU ${gen.clientCpus})` : '2 (taskset unavailable)',
    pinned: isPinned,
    sessions: sizes.refreshSessions,
    loop: loopOf(pinned),
    extra: pinned,
  });
  log(
    `    ${alg} on one CPU: ${pinned.perSecond.toFixed(0)} refreshes/s (server ${(pinned.serverCpuShare * 100).toFixed(0)} % busy), p50 ${pinned.latency.p50.toFixed(2)} ms, p99 ${pinned.latency.p99.toFixed(2)} ms, ${pinned.cpuMsPerOp.toFixed(3)} ms server CPU per refresh (main ${pinned.mainCpuMsPerOp.toFixed(3)}), clients ${pinned.clientCpuMsPerOp.toFixed(3)} ms${store === 'postgres' ? `, PostgreSQL ${pinned.watchedCpuMsPerOp.toFixed(3)} ms` : ''}`,
  );
  if (alsoUnpinned) {
    const both = await window(undefined, sizes.refreshWarmupMs, sizes.refreshMs);
    runs.push({
      alg,
      cpus: `2 (not pinned; clients on CPU ${gen.clientCpus})`,
      pinned: false,
      sessions: sizes.refreshSessions,
      loop: loopOf(both),
      extra: both,
    });
    log(`    ${alg} on both CPUs: ${both.perSecond.toFixed(0)} refreshes/s, p50 ${both.latency.p50.toFixed(2)} ms`);
  }
  // Where the time goes: statements per refresh (sequential, in-process client, timed), and a CPU profile of the app
  // process over a pinned window.
  const client = app.newClient();
  let reply!: HttpReply;
  const breakdown = await timing.breakdown(sizes.breakdownRequests, async () => {
    reply = await client.request('POST', REFRESH, { body: { refreshToken: ops[0].body!.refreshToken } });
    if (reply.status !== 201) throw new Error(`refresh: HTTP ${reply.status}`);
    ops[0].body = { refreshToken: reply.body.refreshToken };
    return reply;
  });
  const profiled = await cpuProfile(() => window('0', 300, sizes.profileMs));
  log(
    `    ${alg}: ${breakdown.statementsPerCall.toFixed(1)} statements per refresh, ${breakdown.dbMsPerCall.toFixed(2)} ms in them of ${breakdown.httpMsPerCall.toFixed(2)} ms (sequential)`,
  );
  return {
    runs,
    breakdown,
    profile: profiled.profile,
    profileOps: profiled.result.ops,
    lastAccessToken: reply.body.accessToken as string,
    lastBody: reply.body as unknown,
  };
}

/**
 * The floor under any refresh figure: a bare Fastify route (the same logger) that answers a canned body of the refresh
 * reply's size, driven by the same load generator, pinned the same way. What is left of a refresh's server CPU above
 * this is the refresh itself (SQL, token signing, the service code).
 */
export async function httpFloor(gen: LoadGenerator, sample: unknown, sessions: number, sizes: Sizes) {
  const app = Fastify({ loggerInstance: productionLikeLogger() });
  const body = JSON.stringify(sample);
  app.post('/floor', async (_req, reply) =>
    reply.status(201).header('content-type', 'application/json; charset=utf-8').send(body),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const ops: LoadOp[] = Array.from({ length: sessions }, () => ({
      method: 'POST',
      path: '/floor',
      body: { refreshToken: 'x'.repeat(43) },
      expect: 201,
    }));
    const result = await gen.run({
      baseUrl,
      warmupMs: sizes.refreshWarmupMs,
      durationMs: Math.min(sizes.refreshMs, 5000),
      ops,
      serverCpus: '0',
    });
    return { bytes: body.length, loop: loopOf(result), extra: result };
  } finally {
    await app.close();
  }
}

/** Raw signing cost: the app's keys.sign, and jose SignJWT with the app's private key imported once. */
export async function measureSigning(app: IdentityApp, accessToken: string, sizes: Sizes) {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as JWTPayload &
    Record<string, unknown>;
  const { iat: _iat, exp: _exp, iss: _iss, ...claims } = payload;
  const { rows } = await app.ctx.db.query<{ kid: string; alg: string; private_key_enc: string }>(
    `SELECT kid, alg, private_key_enc FROM signing_keys WHERE status = 'active'`,
  );
  const key = await importPKCS8(decrypt(keyFromString(BENCH_ENCRYPTION_KEY), rows[0].private_key_enc), rows[0].alg);
  const alg = rows[0].alg;
  const direct = () =>
    new SignJWT(claims)
      .setProtectedHeader({ alg, kid: rows[0].kid, typ: 'JWT' })
      .setIssuer(app.ctx.config.publicUrl)
      .setIssuedAt()
      .setExpirationTime('300s')
      .sign(key);
  const out: { path: string; inFlight: number; perSecond: number; usPerSign: number }[] = [];
  const { result } = await onCpus('0', async () => {
    const res: typeof out = [];
    for (const [path, fn] of [
      ['jose SignJWT, key imported once', direct],
      ['app keys.sign (node:crypto, key imported once)', () => app.ctx.keys.sign(claims, 300)],
    ] as const) {
      for (const inFlight of [1, 8]) {
        const r = await closedLoop(inFlight, 300, sizes.signMs, async () => void (await fn()));
        res.push({ path, inFlight, perSecond: r.perSecond, usPerSign: 1e6 / r.perSecond });
      }
    }
    return res;
  });
  out.push(...result);
  return { alg, claimsBytes: JSON.stringify(claims).length, tokenBytes: accessToken.length, results: out };
}
