import { verify as argon2Verify } from '@node-rs/argon2';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { importPKCS8, SignJWT, type JWTPayload } from 'jose';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContext, LOG_REDACT, type Context } from '../src/context.ts';
import { decrypt, keyFromString } from '../src/lib/crypto.ts';
import { buildApp } from '../src/routes.ts';
import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';
import {
  BENCH_ENCRYPTION_KEY,
  BENCH_VENDOR,
  explainAnalyze,
  httpClient,
  ms,
  openBenchDb,
  REPO_ROOT,
  stats,
  type AreaResult,
  type BenchDb,
  type BenchOptions,
  type HttpClient,
  type HttpReply,
  type Stats,
  type Table,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
  type BenchApp,
} from './lib.ts';
import { onCpus, productionLikeLogger, startLoadGenerator, type LoadGenerator, type LoadOp, type LoadResult } from './loadgen.ts';
import { cpuProfile, profileTable } from './profile.ts';

/**
 * Identity hot paths through the real HTTP stack (app in-process on loopback, keep-alive clients):
 *  - signin:   password sign-ins per second against raw argon2id verifications per second, same parameters, same
 *              concurrency, interleaved in the same run;
 *  - refresh:  refresh-token rotations per second with the process pinned to one CPU, RS256 and ES256, plus the raw
 *              cost of signing one token;
 *  - get-user: vendor get-user-by-id over 100,000 users (latency, throughput, statements, where the time goes).
 * The 100,000 users are seeded with INSERT ... SELECT generate_series (not measured) before any section runs.
 */

const AUTH = '/identity/resources/auth/v1';
const SIGNIN = `${AUTH}/user`;
const REFRESH = `${AUTH}/user/token/refresh`;
const GET_USER = '/identity/resources/vendor-only/users/v1';
const PASSWORD = 'correct horse battery staple';
const BENCH_ACCOUNT = 'bench-identity';

const SIGNIN_RATIO_TARGET = 0.85;
const REFRESH_TARGET: Record<'pglite' | 'postgres', number> = { pglite: 400, postgres: 1000 };

interface Sizes {
  users: number;
  accounts: number;
  /** Sign-in concurrencies measured (each against raw verifications at the same concurrency). */
  signinConcurrency: number[];
  signinRounds: number;
  signinRoundMs: number;
  signinWarmupMs: number;
  refreshSessions: number;
  refreshMs: number;
  refreshWarmupMs: number;
  signMs: number;
  getUserRequests: number;
  getUserBudgetMs: number;
  getUserConcurrency: number;
  getUserThroughputMs: number;
  /** Sequential requests whose statements are timed (breakdown tables). */
  breakdownRequests: number;
  signinBreakdown: number;
  /** Window of the one-at-a-time sign-in / raw verify comparison. */
  sequentialMs: number;
  profileMs: number;
}

const FULL: Sizes = {
  users: 100_000,
  accounts: 1000,
  signinConcurrency: [4, 8],
  signinRounds: 2,
  signinRoundMs: 8000,
  signinWarmupMs: 1000,
  // 32 in flight: a refresh waits on two database round trips and on the thread pool (RS256 signing), so fewer
  // closed-loop sessions leave the one server core idle part of the time (same code, PostgreSQL: 77 % busy at 8,
  // 82–86 % at 16, 96 % at 32). Refreshes/s on one core is a capacity figure, measured with that core saturated;
  // p50/p99 are reported with it (docs/performance.md section 5). BENCH_REFRESH_SESSIONS=8 gives the old setting.
  refreshSessions: 32,
  refreshMs: 10_000,
  refreshWarmupMs: 2000,
  signMs: 3000,
  getUserRequests: 3000,
  getUserBudgetMs: 8000,
  getUserConcurrency: 8,
  getUserThroughputMs: 8000,
  breakdownRequests: 300,
  signinBreakdown: 40,
  sequentialMs: 3000,
  profileMs: 3000,
};
const QUICK: Sizes = {
  users: 5000,
  accounts: 50,
  signinConcurrency: [4],
  signinRounds: 1,
  signinRoundMs: 2000,
  signinWarmupMs: 300,
  refreshSessions: 4,
  refreshMs: 2000,
  refreshWarmupMs: 500,
  signMs: 1000,
  getUserRequests: 300,
  getUserBudgetMs: 2000,
  getUserConcurrency: 4,
  getUserThroughputMs: 2000,
  breakdownRequests: 50,
  signinBreakdown: 10,
  sequentialMs: 1000,
  profileMs: 1000,
};

// ---------------------------------------------------------------------------------------------------------------
// The app with the identity settings: startBenchApp's wiring plus config overrides (rate limits, JWT algorithm).

type IdentityApp = BenchApp;

async function startIdentityApp(bdb: BenchDb, db: ClosableDb, env: Record<string, string>, logger?: pino.Logger): Promise<IdentityApp> {
  // BENCH_IDENTITY_LOG=1: the server's warnings and errors on stderr (to see why a request failed); else /dev/null.
  const log = process.env.BENCH_IDENTITY_LOG ? pino({ level: 'warn', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, pino.destination(2)) : logger;
  // BENCH_IDENTITY_JOBS=1: with the job runner started, as `npm start` runs (the audit chainer's batches and housekeeping
  // then share the CPUs; the statement breakdowns count their statements too).
  return startBenchApp(bdb, db, { env: { ...RAISED_SIGNIN_LIMITS, ...env }, log, jobs: process.env.BENCH_IDENTITY_JOBS === '1' });
}

// ---------------------------------------------------------------------------------------------------------------
// Statement timing: a Db wrapper that, while a recording is open, notes every statement with its wall time.

interface Timed {
  sql: string;
  params: unknown[];
  ms: number;
}

function timingDb(inner: ClosableDb) {
  let sink: Timed[] | undefined;
  let transactions = 0;
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      if (!sink) return q.query<T>(sql, params);
      const out = sink;
      const start = performance.now();
      try {
        return await q.query<T>(sql, params);
      } finally {
        out.push({ sql, params: params ?? [], ms: performance.now() - start });
      }
    },
    transaction: (fn) => {
      if (sink) transactions++;
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    /** Runs `fn` `n` times sequentially and returns what the statements cost per call. */
    async breakdown(n: number, fn: (i: number) => Promise<HttpReply>) {
      const perCall: { statements: number; dbMs: number; httpMs: number }[] = [];
      const bySql = new Map<string, { n: number; ms: number }>();
      let example: Timed[] = [];
      transactions = 0;
      for (let i = 0; i < n; i++) {
        sink = [];
        let reply: HttpReply;
        const got = sink;
        try {
          reply = await fn(i);
        } finally {
          sink = undefined;
        }
        perCall.push({ statements: got.length, dbMs: got.reduce((a, s) => a + s.ms, 0), httpMs: reply.ms });
        for (const s of got) {
          const key = normaliseSql(s.sql);
          const e = bySql.get(key) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += s.ms;
          bySql.set(key, e);
        }
        if (i === n - 1) example = got;
      }
      const mean = (f: (x: (typeof perCall)[number]) => number) => perCall.reduce((a, x) => a + f(x), 0) / (perCall.length || 1);
      return {
        calls: n,
        statementsPerCall: mean((x) => x.statements),
        transactionsPerCall: transactions / n,
        dbMsPerCall: mean((x) => x.dbMs),
        httpMsPerCall: mean((x) => x.httpMs),
        statements: [...bySql.entries()].map(([sql, e]) => ({ sql, perCall: e.n / n, meanMs: e.ms / e.n })).sort((a, b) => b.meanMs * b.perCall - a.meanMs * a.perCall),
        example,
      };
    },
  };
}

const normaliseSql = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 110);

// ---------------------------------------------------------------------------------------------------------------
// Load generation and CPU placement

/** A closed loop's result: LoadResult's figures without the load generator's (these loops run in this process). */
type LoopResult = Pick<LoadResult, 'workers' | 'ops' | 'seconds' | 'perSecond' | 'latency' | 'cpuMsPerOp' | 'mainCpuMsPerOp' | 'otherCpuMsPerOp'>;

/**
 * CPU time (user + system, ms) of the main thread and of all other threads of this process, from /proc/self/task
 * (Linux; undefined elsewhere). Clock ticks of 10 ms: meaningful over windows of a second or more.
 */
function threadCpuMs(): { main: number; other: number } | undefined {
  try {
    let main = 0;
    let other = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      const st = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const t = (Number(f[11]) + Number(f[12])) * 10;
      if (tid === String(process.pid)) main += t;
      else other += t;
    }
    return { main, other };
  } catch {
    return undefined;
  }
}

/**
 * `workers` closed loops calling `op` back to back for `warmupMs + durationMs`; counts the operations that complete
 * inside the measured window (after the warm-up), so the figure is a steady-state rate.
 */
async function closedLoop(workers: number, warmupMs: number, durationMs: number, op: (worker: number) => Promise<void>): Promise<LoopResult> {
  const start = performance.now() + warmupMs;
  const end = start + durationMs;
  const latencies: number[] = [];
  let cpuStart: NodeJS.CpuUsage | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  let threadsStart: ReturnType<typeof threadCpuMs>;
  let threadsEnd: ReturnType<typeof threadCpuMs>;
  const marks = [
    setTimeout(() => ((cpuStart = process.cpuUsage()), (threadsStart = threadCpuMs())), Math.max(0, start - performance.now())),
    setTimeout(() => ((cpu = process.cpuUsage(cpuStart)), (threadsEnd = threadCpuMs())), Math.max(0, end - performance.now())),
  ];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < end) {
        const s = performance.now();
        await op(w);
        const e = performance.now();
        if (e >= start && e <= end) latencies.push(e - s);
      }
    }),
  );
  for (const m of marks) clearTimeout(m);
  const seconds = durationMs / 1000;
  const cpuMs = cpu ? (cpu.user + cpu.system) / 1000 : NaN;
  const n = latencies.length || 1;
  return {
    workers,
    ops: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    latency: stats(latencies),
    cpuMsPerOp: cpuMs / n,
    mainCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.main - threadsStart.main) / n : NaN,
    otherCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.other - threadsStart.other) / n : NaN,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Seeding (not measured)

const uuidOf = (seed: string) => {
  const h = createHash('md5').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};
export const seededUserId = (i: number) => uuidOf(`u${i}`);
const ADMIN_ROLE = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9';
const READ_ONLY_ROLE = 'c784abeb-f295-45fb-84ed-19a1652cfb43';

/**
 * `accounts` accounts and `users` users: every user a member of account i % accounts (its active account), one in ten
 * also of the next account; every membership holds the built-in read-only role, one user in a hundred also admin in
 * its first account; one user in five has a phone number. The password hash is a real argon2id string.
 */
async function seedUsers(db: Db, users: number, accounts: number, passwordHash: string) {
  const start = performance.now();
  await db.query(`
    INSERT INTO tenants (tenant_id, id, name, status, metadata, created_at, updated_at)
    SELECT 'acct-' || i, md5('acct' || i)::uuid, 'Account ' || i, 'active', '{}'::jsonb,
           timestamptz '2023-01-01 00:00:00+00' + i * interval '1 hour', timestamptz '2023-01-01 00:00:00+00' + i * interval '1 hour'
      FROM generate_series(0, ${accounts - 1}) AS i`);
  await db.query(
    `INSERT INTO users (id, email, username, name, verified, metadata, vendor_metadata, password_hash, active_tenant_id, created_at, updated_at, last_login)
     SELECT md5('u' || i)::uuid, 'user' || i || '@bench.example', CASE WHEN i % 3 = 0 THEN 'user' || i END, 'User ' || i, i % 4 <> 0,
            jsonb_build_object('plan', (ARRAY['free','team','business'])[1 + i % 3], 'seat', i % 250), '{}'::jsonb,
            $1, 'acct-' || (i % ${accounts}),
            timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute', timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute',
            CASE WHEN i % 2 = 0 THEN timestamptz '2024-06-01 00:00:00+00' + i * interval '1 second' END
       FROM generate_series(1, ${users}) AS i`,
    [passwordHash],
  );
  await db.query(`
    INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, created_at)
    SELECT 'acct-' || (i % ${accounts}), md5('u' || i)::uuid, false, timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute'
      FROM generate_series(1, ${users}) AS i
    UNION ALL
    SELECT 'acct-' || ((i + 1) % ${accounts}), md5('u' || i)::uuid, false, timestamptz '2023-06-01 00:00:00+00' + i * interval '1 minute'
      FROM generate_series(1, ${users}) AS i WHERE i % 10 = 0`);
  await db.query(`
    INSERT INTO user_roles (tenant_id, user_id, role_id)
    SELECT tenant_id, user_id, '${READ_ONLY_ROLE}'::uuid FROM user_tenants WHERE tenant_id LIKE 'acct-%'
    UNION ALL
    SELECT 'acct-' || (i % ${accounts}), md5('u' || i)::uuid, '${ADMIN_ROLE}'::uuid FROM generate_series(1, ${users}) AS i WHERE i % 100 = 0`);
  await db.query(`
    INSERT INTO user_phone_numbers (phone_number, user_id, is_primary)
    SELECT '+1555' || lpad(i::text, 7, '0'), md5('u' || i)::uuid, true FROM generate_series(1, ${users}) AS i WHERE i % 5 = 0`);
  const elapsed = performance.now() - start;
  const count = async (sql: string) => (await db.query<{ n: number }>(sql)).rows[0].n;
  return {
    ms: elapsed,
    users: await count(`SELECT count(*)::int AS n FROM users WHERE email LIKE '%@bench.example'`),
    memberships: await count(`SELECT count(*)::int AS n FROM user_tenants WHERE tenant_id LIKE 'acct-%'`),
    roleAssignments: await count(`SELECT count(*)::int AS n FROM user_roles WHERE tenant_id LIKE 'acct-%'`),
    phones: await count('SELECT count(*)::int AS n FROM user_phone_numbers'),
  };
}

/** An account and `n` users with a password, through the API (their hashes are the app's own argon2id). */
async function createSignInUsers(app: IdentityApp, n: number): Promise<{ emails: string[]; hash: string }> {
  const acct = await app.client.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: BENCH_ACCOUNT, name: 'Identity bench' } });
  if (acct.status !== 201) throw new Error(`create account: HTTP ${acct.status} ${JSON.stringify(acct.body).slice(0, 300)}`);
  const emails: string[] = [];
  for (let i = 0; i < n; i++) {
    const email = `signin-${i}@bench.example`;
    const r = await app.client.request('POST', '/identity/resources/users/v1', { body: { email, password: PASSWORD, name: `Sign-in ${i}` }, headers: { 'gatehouse-tenant-id': BENCH_ACCOUNT } });
    if (r.status !== 201) throw new Error(`create user: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    emails.push(email);
  }
  const { rows } = await app.ctx.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [emails[0]]);
  return { emails, hash: rows[0].password_hash };
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Sign-in against raw argon2id verification

interface SigninRound {
  concurrency: number;
  round: number;
  raw: LoopResult;
  /** Raw verifications with as many in flight as the machine has CPUs: the hash's best rate here (the floor). */
  rawAtCpus: LoopResult;
  signin: LoopResult;
}

/** The raw rate a sign-in rate is compared with: the better of raw at the same concurrency and raw at the CPU count. */
const bestRaw = (r: Pick<SigninRound, 'raw' | 'rawAtCpus'>) => Math.max(r.raw.perSecond, r.rawAtCpus.perSecond);

async function measureSignin(app: IdentityApp, timing: ReturnType<typeof timingDb>, users: { emails: string[]; hash: string }, sizes: Sizes, log: BenchOptions['log']) {
  const rounds: SigninRound[] = [];
  const maxC = Math.max(...sizes.signinConcurrency);
  const clients = Array.from({ length: maxC }, () => app.newClient());
  const signin = (w: number) => async () => {
    const r = await clients[w].request('POST', SIGNIN, { body: { email: users.emails[w], password: PASSWORD } });
    if (r.status !== 200 || !r.body.accessToken) throw new Error(`sign-in: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  };
  const raw = async () => {
    if (!(await argon2Verify(users.hash, PASSWORD))) throw new Error('argon2 verify answered false');
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
      const round_ = { concurrency: c, round, raw: r, rawAtCpus: rc, signin: s };
      rounds.push(round_);
      log(`    concurrency ${c} round ${round}: raw argon2id ${r.perSecond.toFixed(1)}/s (${r.cpuMsPerOp.toFixed(1)} ms CPU each; ${rc.perSecond.toFixed(1)}/s at ${cpus} in flight), sign-in ${s.perSecond.toFixed(1)}/s (${s.cpuMsPerOp.toFixed(1)} ms CPU each): ${((s.perSecond / bestRaw(round_)) * 100).toFixed(1)} % of the better raw, sign-in p50 ${s.latency.p50.toFixed(1)} ms`);
    }
  }
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
  log(`    one at a time: raw verify ${sequential.raw.cpuMsPerOp.toFixed(1)} ms CPU (other threads ${sequential.raw.otherCpuMsPerOp.toFixed(1)}), sign-in ${sequential.signin.cpuMsPerOp.toFixed(1)} ms (main thread ${sequential.signin.mainCpuMsPerOp.toFixed(1)}, other threads ${sequential.signin.otherCpuMsPerOp.toFixed(1)})`);
  const c = Math.max(...sizes.signinConcurrency);
  const profiled = await cpuProfile(() => closedLoop(c, 0, sizes.profileMs, (w) => signin(w)()));
  log(`    sign-in: ${breakdown.statementsPerCall.toFixed(1)} statements, ${breakdown.dbMsPerCall.toFixed(2)} ms in them of ${breakdown.httpMsPerCall.toFixed(2)} ms (sequential); main thread ${(profiled.profile.busyMs / profiled.result.ops).toFixed(2)} ms per sign-in at ${c} in flight`);
  return { rounds, sequential, breakdown, profile: profiled.profile, profileOps: profiled.result.ops, profileConcurrency: c };
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Refresh

interface RefreshRun {
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
    const r = await app.client.request('POST', SIGNIN, { body: { email: emails[w % emails.length], password: PASSWORD } });
    if (r.status !== 200) throw new Error(`sign-in: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    ops.push({ method: 'POST', path: REFRESH, body: { refreshToken: r.body.refreshToken }, expect: 201, chain: { from: 'refreshToken', to: 'refreshToken' } });
  }
  return ops;
}

/** The PostgreSQL backends serving the app's database (their CPU is reported per refresh); none on PGlite. */
async function databasePids(app: IdentityApp, store: string): Promise<number[]> {
  if (store !== 'postgres') return [];
  const { rows } = await app.ctx.db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
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
async function measureRefresh(app: IdentityApp, gen: LoadGenerator, store: string, timing: ReturnType<typeof timingDb>, emails: string[], alg: string, sizes: Sizes, log: BenchOptions['log'], alsoUnpinned: boolean) {
  const runs: RefreshRun[] = [];
  const ops = await refreshChains(app, emails, sizes.refreshSessions);
  const window = async (serverCpus: string | undefined, warmupMs: number, durationMs: number) =>
    gen.run({ baseUrl: app.baseUrl, warmupMs, durationMs, ops, serverCpus, watchPids: await databasePids(app, store) });
  const pinned = await window('0', sizes.refreshWarmupMs, sizes.refreshMs);
  const isPinned = pinned.serverCpus === '0' && gen.pinned;
  runs.push({ alg, cpus: isPinned ? `1 (taskset -c 0; clients on CPU ${gen.clientCpus})` : '2 (taskset unavailable)', pinned: isPinned, sessions: sizes.refreshSessions, loop: loopOf(pinned), extra: pinned });
  log(`    ${alg} on one CPU: ${pinned.perSecond.toFixed(0)} refreshes/s (server ${(pinned.serverCpuShare * 100).toFixed(0)} % busy), p50 ${pinned.latency.p50.toFixed(2)} ms, p99 ${pinned.latency.p99.toFixed(2)} ms, ${pinned.cpuMsPerOp.toFixed(3)} ms server CPU per refresh (main ${pinned.mainCpuMsPerOp.toFixed(3)}), clients ${pinned.clientCpuMsPerOp.toFixed(3)} ms${store === 'postgres' ? `, PostgreSQL ${pinned.watchedCpuMsPerOp.toFixed(3)} ms` : ''}`);
  if (alsoUnpinned) {
    const both = await window(undefined, sizes.refreshWarmupMs, sizes.refreshMs);
    runs.push({ alg, cpus: `2 (not pinned; clients on CPU ${gen.clientCpus})`, pinned: false, sessions: sizes.refreshSessions, loop: loopOf(both), extra: both });
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
  log(`    ${alg}: ${breakdown.statementsPerCall.toFixed(1)} statements per refresh, ${breakdown.dbMsPerCall.toFixed(2)} ms in them of ${breakdown.httpMsPerCall.toFixed(2)} ms (sequential)`);
  return { runs, breakdown, profile: profiled.profile, profileOps: profiled.result.ops, lastAccessToken: reply.body.accessToken as string, lastBody: reply.body as unknown };
}

/**
 * The floor under any refresh figure: a bare Fastify route (the same logger) that answers a canned body of the refresh
 * reply's size, driven by the same load generator, pinned the same way. What is left of a refresh's server CPU above
 * this is the refresh itself (SQL, token signing, the service code).
 */
async function httpFloor(gen: LoadGenerator, sample: unknown, sessions: number, sizes: Sizes) {
  const app = Fastify({ loggerInstance: productionLikeLogger() });
  const body = JSON.stringify(sample);
  app.post('/floor', async (_req, reply) => reply.status(201).header('content-type', 'application/json; charset=utf-8').send(body));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const ops: LoadOp[] = Array.from({ length: sessions }, () => ({ method: 'POST', path: '/floor', body: { refreshToken: 'x'.repeat(43) }, expect: 201 }));
    const result = await gen.run({ baseUrl, warmupMs: sizes.refreshWarmupMs, durationMs: Math.min(sizes.refreshMs, 5000), ops, serverCpus: '0' });
    return { bytes: body.length, loop: loopOf(result), extra: result };
  } finally {
    await app.close();
  }
}

/** Raw signing cost: the app's keys.sign, and jose SignJWT with the app's private key imported once. */
async function measureSigning(app: IdentityApp, accessToken: string, sizes: Sizes) {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as JWTPayload & Record<string, unknown>;
  const { iat: _iat, exp: _exp, iss: _iss, ...claims } = payload;
  const { rows } = await app.ctx.db.query<{ kid: string; alg: string; private_key_enc: string }>(`SELECT kid, alg, private_key_enc FROM signing_keys WHERE status = 'active'`);
  const key = await importPKCS8(decrypt(keyFromString(BENCH_ENCRYPTION_KEY), rows[0].private_key_enc), rows[0].alg);
  const alg = rows[0].alg;
  const direct = () =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: rows[0].kid, typ: 'JWT' }).setIssuer(app.ctx.config.publicUrl).setIssuedAt().setExpirationTime('300s').sign(key);
  const out: { path: string; inFlight: number; perSecond: number; usPerSign: number }[] = [];
  const { result } = await onCpus('0', async () => {
    const res: typeof out = [];
    for (const [path, fn] of [
      ['jose SignJWT, key imported once', direct],
      ['app keys.sign (node:crypto, key imported once)', () => app.ctx.keys.sign(claims, 300)],
    ] as const) {
      for (const inFlight of [1, 8]) {
        const r = await closedLoop(inFlight, 300, sizes.signMs, async () => void (await fn()));
        res.push({ path, inFlight, perSecond: r.perSecond, usPerSign: (1e6 / r.perSecond) });
      }
    }
    return res;
  });
  out.push(...result);
  return { alg, claimsBytes: JSON.stringify(claims).length, tokenBytes: accessToken.length, results: out };
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Get user by id

async function measureGetUser(app: IdentityApp, timing: ReturnType<typeof timingDb>, users: number, sizes: Sizes, opts: BenchOptions, phase: string) {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return 1 + (seed % users);
  };
  const get = async (c: HttpClient) => {
    const id = seededUserId(rnd());
    const r = await c.request('GET', `${GET_USER}/${id}`);
    if (r.status !== 200 || r.body.id !== id) throw new Error(`get user ${id}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
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
  const throughput = await closedLoop(sizes.getUserConcurrency, 1000, sizes.getUserThroughputMs, async (w) => void (await get(clients[w])));
  const breakdown = await timing.breakdown(sizes.breakdownRequests, () => get(app.client));
  const profiled = await cpuProfile(() => closedLoop(sizes.getUserConcurrency, 0, sizes.profileMs, async (w) => void (await get(clients[w]))));
  let plans: { sql: string; params: unknown[]; plan: string[] }[] | undefined;
  if (opts.explain) {
    plans = [];
    for (const s of breakdown.example) plans.push({ sql: s.sql, params: s.params, plan: await explainAnalyze(app.ctx.db, s) });
  }
  opts.log(
    `    ${phase}: p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms (n=${latency.n}); ${throughput.perSecond.toFixed(0)} req/s at ${sizes.getUserConcurrency} in flight; ` +
      `${breakdown.statementsPerCall.toFixed(1)} statements, ${breakdown.dbMsPerCall.toFixed(2)} ms of ${breakdown.httpMsPerCall.toFixed(2)} ms in them`,
  );
  return { phase, latency, throughput, breakdown: { ...breakdown, example: undefined }, profile: profiled.profile, profileOps: profiled.result.ops, plans };
}

function statementsTable(title: string, b: Awaited<ReturnType<ReturnType<typeof timingDb>['breakdown']>>, notes: string[] = []): Table {
  return {
    title,
    columns: ['statement', 'per call', 'mean ms'],
    rows: b.statements.map((s) => [s.sql, ms(s.perCall, 2), ms(s.meanMs, 3)]),
    notes: [
      `${b.statementsPerCall.toFixed(1)} statements and ${b.transactionsPerCall.toFixed(1)} transactions per call; ${b.dbMsPerCall.toFixed(2)} ms of the ${b.httpMsPerCall.toFixed(2)} ms request (sequential, ${b.calls} calls) is spent waiting on them.`,
      ...notes,
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------

export async function run(opts: BenchOptions): Promise<AreaResult> {
  // BENCH_REFRESH_SESSIONS: refresh sessions in flight (default 32; 4 with --quick), to see how many saturate the server.
  const sizes = { ...(opts.quick ? QUICK : FULL) };
  if (process.env.BENCH_REFRESH_SESSIONS) sizes.refreshSessions = Number(process.env.BENCH_REFRESH_SESSIONS);
  const { store, log } = opts;
  const want = (s: string) => !opts.only || opts.only.includes(s);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const load: Record<string, number[]> = {};
  const data: Record<string, unknown> = { sizes, loadAverage: load, uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? '4 (default)' };
  const section = (key: string, title: string) => {
    load[key] = loadavg().map((x) => Number(x.toFixed(2)));
    log(`\n[${store}] ${title}  (load average ${load[key].join(' ')})`);
  };
  const cleanups: (() => Promise<void>)[] = [];

  try {
    section('seed', `seeding ${sizes.users.toLocaleString('en-US')} users in ${sizes.accounts} accounts`);
    const bdb = await openBenchDb(store, 'identity');
    cleanups.push(() => bdb.destroy());
    const timing = timingDb(bdb.db);
    // The server's logger as in production (synchronous writes; loadgen.ts productionLikeLogger): the default async
    // destination would hand every log line to libuv's thread pool, where the sign-in's argon2 jobs run.
    let app = await startIdentityApp(bdb, timing.db, {}, productionLikeLogger());
    cleanups.unshift(() => app.close());
    const signinUsers = await createSignInUsers(app, Math.max(...sizes.signinConcurrency, sizes.refreshSessions));
    const seed = await seedUsers(bdb.db, sizes.users, sizes.accounts, signinUsers.hash);
    log(`    seeded ${seed.users} users, ${seed.memberships} memberships, ${seed.roleAssignments} role assignments, ${seed.phones} phones in ${(seed.ms / 1000).toFixed(1)} s (not measured)`);
    data.seed = seed;
    if (store === 'postgres') await bdb.db.query('VACUUM ANALYZE');
    const dbState = store === 'postgres' ? 'after VACUUM ANALYZE (autovacuum steady state)' : 'never analyzed (as a PGlite deployment runs)';

    // ---- 3a. get-user on the data as a deployment would have it (PGlite: never analyzed)
    const getUser: Awaited<ReturnType<typeof measureGetUser>>[] = [];
    if (want('get-user')) {
      section('getUser', `3. GET ${GET_USER}/{id} over ${sizes.users.toLocaleString('en-US')} users, ${dbState}`);
      getUser.push(await measureGetUser(app, timing, sizes.users, sizes, opts, dbState));
    }

    // ---- 1. sign-in vs raw argon2id
    if (want('signin')) {
      section('signin', `1. password sign-in vs raw argon2id verify (m=19456, t=2, p=1), concurrency ${sizes.signinConcurrency.join(' and ')}`);
      const signin = await measureSignin(app, timing, signinUsers, sizes, log);
      const rounds = signin.rounds;
      data.signin = signin;
      const rows: Table['rows'] = [];
      for (const c of sizes.signinConcurrency) {
        const rs = rounds.filter((r) => r.concurrency === c);
        const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
        for (const r of rs) rows.push([c, `round ${r.round}`, ms(r.raw.perSecond, 1), ms(r.rawAtCpus.perSecond, 1), ms(r.signin.perSecond, 1), pct(r.signin.perSecond, r.raw.perSecond), pct(r.signin.perSecond, bestRaw(r)), ms(r.raw.latency.p50, 1), ms(r.signin.latency.p50, 1), ms(r.signin.latency.p99, 1), ms(r.raw.cpuMsPerOp, 1), ms(r.signin.cpuMsPerOp, 1), ms(r.signin.mainCpuMsPerOp, 1), ms(r.signin.otherCpuMsPerOp, 1)]);
        const rate = (pick: (r: SigninRound) => LoopResult) => rs.reduce((a, r) => a + pick(r).ops, 0) / rs.reduce((a, r) => a + pick(r).seconds, 0);
        const raw = rate((r) => r.raw);
        const rawCpus = rate((r) => r.rawAtCpus);
        const best = Math.max(raw, rawCpus);
        const sig = rate((r) => r.signin);
        rows.push([c, 'all rounds', ms(raw, 1), ms(rawCpus, 1), ms(sig, 1), pct(sig, raw), pct(sig, best), null, null, null, null, null, null, null]);
        targets.push({ name: `sign-ins ≥ ${SIGNIN_RATIO_TARGET * 100} % of raw argon2id verifications (concurrency ${c}; the better raw rate)`, target: `≥ ${SIGNIN_RATIO_TARGET * 100} %`, measured: `${pct(sig, best)} (${sig.toFixed(1)} vs ${best.toFixed(1)} /s; ${pct(sig, raw)} of raw at ${c} in flight)`, met: sig / best >= SIGNIN_RATIO_TARGET });
      }
      tables.push({
        title: `[${store}] POST ${SIGNIN} vs raw @node-rs/argon2 verify, same parameters and concurrency (${sizes.signinRoundMs / 1000} s windows, interleaved)`,
        columns: ['in flight', 'round', 'raw verify/s', `raw at ${availableParallelism()} in flight`, 'sign-ins/s', 'sign-in / raw', 'sign-in / better raw', 'raw p50 ms', 'sign-in p50 ms', 'sign-in p99 ms', 'raw CPU ms/op', 'sign-in CPU ms/op', 'sign-in main thread', 'sign-in other threads'],
        rows,
        notes: [
          `Each sign-in worker has its own keep-alive connection and user; argon2 runs on libuv's thread pool (${data.uvThreadpoolSize} threads) over both CPUs, the rest of the sign-in on the main thread. The server computes at most PASSWORD_HASH_CONCURRENCY hashes at once (default: the CPUs, ${availableParallelism()} here); raw verifications are measured at the same concurrency as the sign-ins and at the CPU count, and the target is read against the better of the two.`,
          `Database ${dbState}; ${sizes.users.toLocaleString('en-US')} seeded users besides the sign-in users. Rate limits raised through LOGIN_RATE_LIMIT_PER_IP / _PER_IDENTIFIER.`,
          'CPU ms/op: this process\'s CPU time (all threads) per operation; main thread = HTTP, validation, SQL client (and PGlite itself), token claims; other threads = libuv pool (argon2, WebCrypto signing) and V8 helpers.',
          'The "one at a time" row (not a target) shows the costs without contention: the sign-in\'s own main-thread work, and argon2 slower between real requests than in a raw loop that keeps its 19 MiB working set in cache.',
        ],
      });
      const sq = signin.sequential;
      rows.push([1, 'one at a time', ms(sq.raw.perSecond, 1), null, ms(sq.signin.perSecond, 1), `${((sq.signin.perSecond / sq.raw.perSecond) * 100).toFixed(1)} %`, null, ms(sq.raw.latency.p50, 1), ms(sq.signin.latency.p50, 1), ms(sq.signin.latency.p99, 1), ms(sq.raw.cpuMsPerOp, 1), ms(sq.signin.cpuMsPerOp, 1), ms(sq.signin.mainCpuMsPerOp, 1), ms(sq.signin.otherCpuMsPerOp, 1)]);
      tables.push(statementsTable(`[${store}] statements of one sign-in`, signin.breakdown));
      tables.push(profileTable(`[${store}] where sign-ins at ${signin.profileConcurrency} in flight spend the main thread`, signin.profile, signin.profileOps, [
        'argon2 runs on the thread pool: the main thread is idle while it waits; what is not idle is the sign-in\'s own work (HTTP, validation, SQL, token), which competes with argon2 for the two CPUs.',
      ]));
    }

    // ---- 2. refresh: RS256 on the running app, then ES256 on a context started with JWT_ALGORITHM=ES256
    if (want('refresh')) {
      section('refresh', `2. token refresh, ${sizes.refreshSessions} sessions each chaining its own tokens, server pinned to CPU 0, clients in a load-generator process on CPU 1`);
      const refresh: Record<string, unknown> = {};
      const runs: RefreshRun[] = [];
      const signing: Awaited<ReturnType<typeof measureSigning>>[] = [];
      let lastBody: unknown;
      const gen = await startLoadGenerator({ clientCpus: '1' });
      cleanups.unshift(() => gen.close());
      for (const alg of ['RS256', 'ES256']) {
        // A fresh app per algorithm, with the server's own logger settings (synchronous writes, here to /dev/null).
        await app.close();
        app = await startIdentityApp(bdb, timing.db, alg === 'RS256' ? {} : { JWT_ALGORITHM: alg }, productionLikeLogger());
        const r = await measureRefresh(app, gen, store, timing, signinUsers.emails, alg, sizes, log, alg === 'RS256');
        runs.push(...r.runs);
        lastBody = r.lastBody;
        const s = await measureSigning(app, r.lastAccessToken, sizes);
        signing.push(s);
        log(`    raw ${alg} signing on one CPU: ${s.results.map((x) => `${x.path} ×${x.inFlight}: ${x.perSecond.toFixed(0)}/s`).join('; ')}`);
        refresh[alg] = { runs: r.runs, breakdown: r.breakdown, profile: r.profile, signing: s };
        tables.push(statementsTable(`[${store}] statements of one ${alg} refresh`, r.breakdown));
        tables.push(profileTable(`[${store}] where a pinned ${alg} refresh loop spends the server's main thread`, r.profile, r.profileOps, [
          'node:inspector CPU profile of the app process\'s main thread (server and, for PGlite, the database; the clients are in another process), taken on a separate window. On one CPU, thread-pool work (signing) that preempts the main thread is charged to the frame the main thread was in (often a native `run`).',
        ]));
      }
      await app.close();
      app = await startIdentityApp(bdb, timing.db, {}, productionLikeLogger());
      const floor = await httpFloor(gen, lastBody, sizes.refreshSessions, sizes);
      log(`    HTTP floor (bare Fastify route, canned ${floor.bytes}-byte reply) on one CPU: ${floor.loop.perSecond.toFixed(0)} requests/s, ${floor.loop.cpuMsPerOp.toFixed(3)} ms server CPU each`);
      refresh.httpFloor = floor;
      runs.push({ alg: 'none: HTTP floor', cpus: `1 (taskset -c 0; clients on CPU ${gen.clientCpus})`, pinned: false, sessions: sizes.refreshSessions, loop: floor.loop, extra: floor.extra });
      data.refresh = refresh;
      tables.push({
        title: `[${store}] POST ${REFRESH} with {refreshToken}: ${sizes.refreshSessions} sessions in parallel, each chaining its rotated tokens (${sizes.refreshMs / 1000} s window)`,
        columns: ['algorithm', 'CPUs for the server', 'refreshes/s', 'p50 ms', 'p99 ms', 'server CPU ms/op', 'main thread', 'other threads', 'server CPU busy', 'client CPU ms/op', ...(store === 'postgres' ? ['PostgreSQL CPU ms/op'] : []), `target ${REFRESH_TARGET[store]}/s (one CPU)`],
        rows: runs.map((r) => [r.alg, r.cpus, ms(r.loop.perSecond, 0), ms(r.loop.latency.p50), ms(r.loop.latency.p99), ms(r.loop.cpuMsPerOp, 3), ms(r.loop.mainCpuMsPerOp, 2), ms(r.loop.otherCpuMsPerOp, 2), r.extra ? `${(r.extra.serverCpuShare * 100).toFixed(0)} %` : null, r.extra ? ms(r.extra.clientCpuMsPerOp, 3) : null, ...(store === 'postgres' ? [r.extra ? ms(r.extra.watchedCpuMsPerOp, 3) : null] : []), r.pinned && r.alg === 'RS256' ? (r.loop.perSecond >= REFRESH_TARGET[store] ? 'met' : 'MISSED') : '–']),
        notes: [
          'The HTTP clients run in a separate load-generator process (bench/loadgen-child.ts) pinned to CPU 1, each session on its own keep-alive connection; the server (this process: every thread, ' + (store === 'pglite' ? 'PGlite included' : 'the pg client included') + ') is pinned to CPU 0 with taskset -a for the "1" rows. Server CPU is this process\'s CPU in the window, per refresh.',
          store === 'postgres' ? 'The PostgreSQL server runs unpinned on the same machine; the CPU of its backends for the app\'s connections is reported per refresh.' : 'PGlite runs inside the server process, so its CPU is the server\'s.',
          'HTTP floor: a bare Fastify POST route with the same logger answering a canned body of the refresh reply\'s size, same load generator and pinning: the cost of HTTP in the server alone.',
          '"server CPU busy": the server process\'s CPU time over the window; under 100 % on one CPU the rate is limited elsewhere (clients, database, other processes on the machine).',
          `Database ${dbState}.`,
        ],
      });
      tables.push({
        title: `[${store}] raw cost of signing one access token (the claims of a real refresh answer), process pinned to one CPU`,
        columns: ['algorithm', 'path', 'in flight', 'signs/s', 'µs per sign'],
        rows: signing.flatMap((s) => s.results.map((x) => [s.alg, x.path, x.inFlight, ms(x.perSecond, 0), ms(x.usPerSign, 0)])),
        notes: [`Token of ${signing[0]?.tokenBytes ?? 0} bytes (claims ${signing[0]?.claimsBytes ?? 0} bytes). jose signs through WebCrypto, the app through node:crypto's sign with a callback; both run the signature on the libuv thread pool (same CPU here).`],
      });
      const rs = runs.find((r) => r.alg === 'RS256' && r.pinned);
      if (rs) targets.push({ name: `RS256 refreshes/s on one CPU (${store})`, target: `≥ ${REFRESH_TARGET[store]}/s`, measured: `${rs.loop.perSecond.toFixed(0)}/s`, met: rs.loop.perSecond >= REFRESH_TARGET[store] });
      else targets.push({ name: `RS256 refreshes/s on one CPU (${store})`, target: `≥ ${REFRESH_TARGET[store]}/s`, measured: 'not pinned: taskset unavailable', met: false });
    }

    // ---- 3b. PGlite: get-user again once the tables have statistics
    if (want('get-user') && store === 'pglite') {
      section('getUserAnalyzed', `3. GET ${GET_USER}/{id} after VACUUM ANALYZE`);
      await bdb.db.query('VACUUM ANALYZE');
      getUser.push(await measureGetUser(app, timing, sizes.users, sizes, opts, 'after VACUUM ANALYZE'));
    }
    if (getUser.length) {
      data.getUser = getUser;
      tables.push({
        title: `[${store}] GET ${GET_USER}/{id}: random users of ${sizes.users.toLocaleString('en-US')} (vendor token)`,
        columns: ['database', 'n', 'p50 ms', 'p90 ms', 'p99 ms', `req/s at ${sizes.getUserConcurrency} in flight`, `p50 ms at ${sizes.getUserConcurrency}`, 'process CPU ms/req', 'statements', 'ms in statements'],
        rows: getUser.map((g) => [g.phase, g.latency.n, ms(g.latency.p50), ms(g.latency.p90), ms(g.latency.p99), ms(g.throughput.perSecond, 0), ms(g.throughput.latency.p50), ms(g.throughput.cpuMsPerOp, 3), ms(g.breakdown.statementsPerCall, 1), ms(g.breakdown.dbMsPerCall)]),
        notes: [
          'Latency: one keep-alive connection, sequential requests. Throughput: closed loops, one connection each, both CPUs.',
          `Users: ${seed.users} (${seed.memberships} memberships, ${seed.roleAssignments} role assignments, ${seed.phones} phone numbers).`,
        ],
      });
      for (const g of getUser) {
        tables.push(statementsTable(`[${store}] statements of one get-user (${g.phase})`, g.breakdown as any, [
          'The record\'s statements run two at a time (memberships with phones, then roles with permissions): their times overlap, and on PGlite the second of a pair includes waiting for the first.',
        ]));
        tables.push(profileTable(`[${store}] where get-user at ${sizes.getUserConcurrency} in flight spends the main thread (${g.phase})`, g.profile, g.profileOps));
      }
    }
  } finally {
    for (const c of cleanups) await c().catch((err) => log(`cleanup failed: ${err instanceof Error ? err.message : String(err)}`));
  }
  return { area: 'identity', store, tables, data, targets };
}
