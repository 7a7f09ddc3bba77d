import { availableParallelism, loadavg } from 'node:os';
import {
  FULL,
  GET_USER,
  QUICK,
  REFRESH,
  REFRESH_TARGET,
  SIGNIN,
  SIGNIN_RATIO_TARGET,
  startIdentityApp,
} from './identity-config.ts';
import { measureGetUser } from './identity-get-user.ts';
import type { LoopResult } from './identity-loops.ts';
import { httpFloor, measureRefresh, measureSigning, type RefreshRun } from './identity-refresh.ts';
import { createSignInUsers, seedUsers } from './identity-seed.ts';
import { bestRaw, measureSignin, type SigninRound } from './identity-signin.ts';
import { statementsTable, timingDb } from './identity-statements.ts';
import { ms, openBenchDb, type AreaResult, type BenchOptions, type Table } from './lib.ts';
import { productionLikeLogger, startLoadGenerator } from './loadgen.ts';
import { profileTable } from './profile.ts';

/**
 * Identity hot paths through the real HTTP stack (app in-process on loopback, keep-alive clients):
 *  - signin:   password sign-ins per second against raw argon2id verifications per second, same parameters, same
 *              concurrency, interleaved in the same run;
 *  - refresh:  refresh-token rotations per second with the process pinned to one CPU, RS256 and ES256, plus the raw
 *              cost of signing one token;
 *  - get-user: vendor get-user-by-id over 100,000 users (latency, throughput, statements, where the time goes).
 * The 100,000 users are seeded with INSERT ... SELECT generate_series (not measured) before any section runs.
 */

export { seededUserId } from './identity-seed.ts';

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
  const data: Record<string, unknown> = {
    sizes,
    loadAverage: load,
    uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? '4 (default)',
  };
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
    log(
      `    seeded ${seed.users} users, ${seed.memberships} memberships, ${seed.roleAssignments} role assignments, ${seed.phones} phones in ${(seed.ms / 1000).toFixed(1)} s (not measured)`,
    );
    data.seed = seed;
    if (store === 'postgres') await bdb.db.query('VACUUM ANALYZE');
    const dbState =
      store === 'postgres'
        ? 'after VACUUM ANALYZE (autovacuum steady state)'
        : 'never analyzed (as a PGlite deployment runs)';

    // ---- 3a. get-user on the data as a deployment would have it (PGlite: never analyzed)
    const getUser: Awaited<ReturnType<typeof measureGetUser>>[] = [];
    if (want('get-user')) {
      section('getUser', `3. GET ${GET_USER}/{id} over ${sizes.users.toLocaleString('en-US')} users, ${dbState}`);
      getUser.push(await measureGetUser(app, timing, sizes.users, sizes, opts, dbState));
    }

    // ---- 1. sign-in vs raw argon2id
    if (want('signin')) {
      section(
        'signin',
        `1. password sign-in vs raw argon2id verify (m=19456, t=2, p=1), concurrency ${sizes.signinConcurrency.join(' and ')}`,
      );
      const signin = await measureSignin(app, timing, signinUsers, sizes, log);
      const rounds = signin.rounds;
      data.signin = signin;
      const rows: Table['rows'] = [];
      for (const c of sizes.signinConcurrency) {
        const rs = rounds.filter((r) => r.concurrency === c);
        const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
        for (const r of rs)
          rows.push([
            c,
            `round ${r.round}`,
            ms(r.raw.perSecond, 1),
            ms(r.rawAtCpus.perSecond, 1),
            ms(r.signin.perSecond, 1),
            pct(r.signin.perSecond, r.raw.perSecond),
            pct(r.signin.perSecond, bestRaw(r)),
            ms(r.floor.perSecond, 1),
            pct(r.floor.perSecond, bestRaw(r)),
            ms(r.raw.latency.p50, 1),
            ms(r.signin.latency.p50, 1),
            ms(r.signin.latency.p99, 1),
            ms(r.raw.cpuMsPerOp, 1),
            ms(r.signin.cpuMsPerOp, 1),
            ms(r.signin.mainCpuMsPerOp, 1),
            ms(r.signin.otherCpuMsPerOp, 1),
            ms(r.floor.cpuMsPerOp, 1),
          ]);
        const rate = (pick: (r: SigninRound) => LoopResult) =>
          rs.reduce((a, r) => a + pick(r).ops, 0) / rs.reduce((a, r) => a + pick(r).seconds, 0);
        const raw = rate((r) => r.raw);
        const rawCpus = rate((r) => r.rawAtCpus);
        const best = Math.max(raw, rawCpus);
        const sig = rate((r) => r.signin);
        const floor = rate((r) => r.floor);
        rows.push([
          c,
          'all rounds',
          ms(raw, 1),
          ms(rawCpus, 1),
          ms(sig, 1),
          pct(sig, raw),
          pct(sig, best),
          ms(floor, 1),
          pct(floor, best),
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
        ]);
        targets.push({
          name: `sign-ins ≥ ${SIGNIN_RATIO_TARGET * 100} % of raw argon2id verifications (concurrency ${c}; the better raw rate)`,
          target: `≥ ${SIGNIN_RATIO_TARGET * 100} %`,
          measured: `${pct(sig, best)} (${sig.toFixed(1)} vs ${best.toFixed(1)} /s; ${pct(sig, raw)} of raw at ${c} in flight; HTTP + argon2 floor ${pct(floor, best)})`,
          met: sig / best >= SIGNIN_RATIO_TARGET,
        });
      }
      tables.push({
        title: `[${store}] POST ${SIGNIN} vs raw @node-rs/argon2 verify, same parameters and concurrency (${sizes.signinRoundMs / 1000} s windows, interleaved)`,
        columns: [
          'in flight',
          'round',
          'raw verify/s',
          `raw at ${availableParallelism()} in flight`,
          'sign-ins/s',
          'sign-in / raw',
          'sign-in / better raw',
          'HTTP + argon2 floor/s',
          'floor / better raw',
          'raw p50 ms',
          'sign-in p50 ms',
          'sign-in p99 ms',
          'raw CPU ms/op',
          'sign-in CPU ms/op',
          'sign-in main thread',
          'sign-in other threads',
          'floor CPU ms/op',
        ],
        rows,
        notes: [
          `Each sign-in worker has its own keep-alive connection and user; argon2 runs on libuv's thread pool (${data.uvThreadpoolSize} threads) over both CPUs, the rest of the sign-in on the main thread. The server computes at most PASSWORD_HASH_CONCURRENCY hashes at once (default: the CPUs, ${availableParallelism()} here); raw verifications are measured at the same concurrency as the sign-ins and at the CPU count, and the target is read against the better of the two.`,
          `Database ${dbState}; ${sizes.users.toLocaleString('en-US')} seeded users besides the sign-in users. Rate limits raised (RAISED_SIGNIN_LIMITS).`,
          "CPU ms/op: this process's CPU time (all threads) per operation; main thread = HTTP, validation, SQL client (and PGlite itself), token claims; other threads = libuv pool (argon2, WebCrypto signing) and V8 helpers.",
          'The "one at a time" row (not a target) shows the costs without contention: the sign-in\'s own main-thread work, and argon2 slower between real requests than in a raw loop that keeps its 19 MiB working set in cache.',
          "HTTP + argon2 floor (not a target): a bare Fastify route in this process, measured in the same rounds with its own clients of the same kind, that parses the body, verifies the password through the same CPU bound and answers a canned body of a login response's size; no database, no token, no hooks. Its share of raw is the most any sign-in can reach on this machine, where the HTTP clients (and PostgreSQL) share the CPUs with the hash.",
        ],
      });
      const sq = signin.sequential;
      rows.push([
        1,
        'one at a time',
        ms(sq.raw.perSecond, 1),
        null,
        ms(sq.signin.perSecond, 1),
        `${((sq.signin.perSecond / sq.raw.perSecond) * 100).toFixed(1)} %`,
        null,
        null,
        null,
        ms(sq.raw.latency.p50, 1),
        ms(sq.signin.latency.p50, 1),
        ms(sq.signin.latency.p99, 1),
        ms(sq.raw.cpuMsPerOp, 1),
        ms(sq.signin.cpuMsPerOp, 1),
        ms(sq.signin.mainCpuMsPerOp, 1),
        ms(sq.signin.otherCpuMsPerOp, 1),
        null,
      ]);
      tables.push(statementsTable(`[${store}] statements of one sign-in`, signin.breakdown));
      tables.push(
        profileTable(
          `[${store}] where sign-ins at ${signin.profileConcurrency} in flight spend the main thread`,
          signin.profile,
          signin.profileOps,
          [
            "argon2 runs on the thread pool: the main thread is idle while it waits; what is not idle is the sign-in's own work (HTTP, validation, SQL, token), which competes with argon2 for the two CPUs.",
          ],
        ),
      );
    }

    // ---- 2. refresh: RS256 on the running app, then ES256 on a context started with JWT_ALGORITHM=ES256
    if (want('refresh')) {
      section(
        'refresh',
        `2. token refresh, ${sizes.refreshSessions} sessions each chaining its own tokens, server pinned to CPU 0, clients in a load-generator process on CPU 1`,
      );
      const refresh: Record<string, unknown> = {};
      const runs: RefreshRun[] = [];
      const signing: Awaited<ReturnType<typeof measureSigning>>[] = [];
      let lastBody: unknown;
      const gen = await startLoadGenerator({ clientCpus: '1' });
      cleanups.unshift(() => gen.close());
      for (const alg of ['RS256', 'ES256']) {
        // A fresh app per algorithm, with the server's own logger settings (synchronous writes, here to /dev/null).
        await app.close();
        app = await startIdentityApp(
          bdb,
          timing.db,
          alg === 'RS256' ? {} : { JWT_ALGORITHM: alg },
          productionLikeLogger(),
        );
        const r = await measureRefresh(app, gen, store, timing, signinUsers.emails, alg, sizes, log, alg === 'RS256');
        runs.push(...r.runs);
        lastBody = r.lastBody;
        const s = await measureSigning(app, r.lastAccessToken, sizes);
        signing.push(s);
        log(
          `    raw ${alg} signing on one CPU: ${s.results.map((x) => `${x.path} ×${x.inFlight}: ${x.perSecond.toFixed(0)}/s`).join('; ')}`,
        );
        refresh[alg] = { runs: r.runs, breakdown: r.breakdown, profile: r.profile, signing: s };
        tables.push(statementsTable(`[${store}] statements of one ${alg} refresh`, r.breakdown));
        tables.push(
          profileTable(
            `[${store}] where a pinned ${alg} refresh loop spends the server's main thread`,
            r.profile,
            r.profileOps,
            [
              "node:inspector CPU profile of the app process's main thread (server and, for PGlite, the database; the clients are in another process), taken on a separate window. On one CPU, thread-pool work (signing) that preempts the main thread is charged to the frame the main thread was in (often a native `run`).",
            ],
          ),
        );
      }
      await app.close();
      app = await startIdentityApp(bdb, timing.db, {}, productionLikeLogger());
      const floor = await httpFloor(gen, lastBody, sizes.refreshSessions, sizes);
      log(
        `    HTTP floor (bare Fastify route, canned ${floor.bytes}-byte reply) on one CPU: ${floor.loop.perSecond.toFixed(0)} requests/s, ${floor.loop.cpuMsPerOp.toFixed(3)} ms server CPU each`,
      );
      refresh.httpFloor = floor;
      runs.push({
        alg: 'none: HTTP floor',
        cpus: `1 (taskset -c 0; clients on CPU ${gen.clientCpus})`,
        pinned: false,
        sessions: sizes.refreshSessions,
        loop: floor.loop,
        extra: floor.extra,
      });
      data.refresh = refresh;
      tables.push({
        title: `[${store}] POST ${REFRESH} with {refreshToken}: ${sizes.refreshSessions} sessions in parallel, each chaining its rotated tokens (${sizes.refreshMs / 1000} s window)`,
        columns: [
          'algorithm',
          'CPUs for the server',
          'refreshes/s',
          'p50 ms',
          'p99 ms',
          'server CPU ms/op',
          'main thread',
          'other threads',
          'server CPU busy',
          'client CPU ms/op',
          ...(store === 'postgres' ? ['PostgreSQL CPU ms/op'] : []),
          `target ${REFRESH_TARGET[store]}/s (one CPU)`,
        ],
        rows: runs.map((r) => [
          r.alg,
          r.cpus,
          ms(r.loop.perSecond, 0),
          ms(r.loop.latency.p50),
          ms(r.loop.latency.p99),
          ms(r.loop.cpuMsPerOp, 3),
          ms(r.loop.mainCpuMsPerOp, 2),
          ms(r.loop.otherCpuMsPerOp, 2),
          r.extra ? `${(r.extra.serverCpuShare * 100).toFixed(0)} %` : null,
          r.extra ? ms(r.extra.clientCpuMsPerOp, 3) : null,
          ...(store === 'postgres' ? [r.extra ? ms(r.extra.watchedCpuMsPerOp, 3) : null] : []),
          r.pinned && r.alg === 'RS256' ? (r.loop.perSecond >= REFRESH_TARGET[store] ? 'met' : 'MISSED') : '–',
        ]),
        notes: [
          'The HTTP clients run in a separate load-generator process (bench/loadgen-child.ts) pinned to CPU 1, each session on its own keep-alive connection; the server (this process: every thread, ' +
            (store === 'pglite' ? 'PGlite included' : 'the pg client included') +
            ') is pinned to CPU 0 with taskset -a for the "1" rows. Server CPU is this process\'s CPU in the window, per refresh.',
          store === 'postgres'
            ? "The PostgreSQL server runs unpinned on the same machine; the CPU of its backends for the app's connections is reported per refresh."
            : "PGlite runs inside the server process, so its CPU is the server's.",
          "HTTP floor: a bare Fastify POST route with the same logger answering a canned body of the refresh reply's size, same load generator and pinning: the cost of HTTP in the server alone.",
          '"server CPU busy": the server process\'s CPU time over the window; under 100 % on one CPU the rate is limited elsewhere (clients, database, other processes on the machine).',
          `Database ${dbState}.`,
        ],
      });
      tables.push({
        title: `[${store}] raw cost of signing one access token (the claims of a real refresh answer), process pinned to one CPU`,
        columns: ['algorithm', 'path', 'in flight', 'signs/s', 'µs per sign'],
        rows: signing.flatMap((s) =>
          s.results.map((x) => [s.alg, x.path, x.inFlight, ms(x.perSecond, 0), ms(x.usPerSign, 0)]),
        ),
        notes: [
          `Token of ${signing[0]?.tokenBytes ?? 0} bytes (claims ${signing[0]?.claimsBytes ?? 0} bytes). jose signs through WebCrypto, the app through node:crypto's sign with a callback; both run the signature on the libuv thread pool (same CPU here).`,
        ],
      });
      const rs = runs.find((r) => r.alg === 'RS256' && r.pinned);
      if (rs)
        targets.push({
          name: `RS256 refreshes/s on one CPU (${store})`,
          target: `≥ ${REFRESH_TARGET[store]}/s`,
          measured: `${rs.loop.perSecond.toFixed(0)}/s`,
          met: rs.loop.perSecond >= REFRESH_TARGET[store],
        });
      else
        targets.push({
          name: `RS256 refreshes/s on one CPU (${store})`,
          target: `≥ ${REFRESH_TARGET[store]}/s`,
          measured: 'not pinned: taskset unavailable',
          met: false,
        });
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
        columns: [
          'database',
          'n',
          'p50 ms',
          'p90 ms',
          'p99 ms',
          `req/s at ${sizes.getUserConcurrency} in flight`,
          `p50 ms at ${sizes.getUserConcurrency}`,
          'process CPU ms/req',
          'statements',
          'ms in statements',
        ],
        rows: getUser.map((g) => [
          g.phase,
          g.latency.n,
          ms(g.latency.p50),
          ms(g.latency.p90),
          ms(g.latency.p99),
          ms(g.throughput.perSecond, 0),
          ms(g.throughput.latency.p50),
          ms(g.throughput.cpuMsPerOp, 3),
          ms(g.breakdown.statementsPerCall, 1),
          ms(g.breakdown.dbMsPerCall),
        ]),
        notes: [
          'Latency: one keep-alive connection, sequential requests. Throughput: closed loops, one connection each, both CPUs.',
          `Users: ${seed.users} (${seed.memberships} memberships, ${seed.roleAssignments} role assignments, ${seed.phones} phone numbers).`,
        ],
      });
      for (const g of getUser) {
        tables.push(
          statementsTable(`[${store}] statements of one get-user (${g.phase})`, g.breakdown as any, [
            "The record's statements run two at a time (memberships with phones, then roles with permissions): their times overlap, and on PGlite the second of a pair includes waiting for the first.",
          ]),
        );
        tables.push(
          profileTable(
            `[${store}] where get-user at ${sizes.getUserConcurrency} in flight spends the main thread (${g.phase})`,
            g.profile,
            g.profileOps,
          ),
        );
      }
    }
  } finally {
    for (const c of cleanups)
      await c().catch((err) => log(`cleanup failed: ${err instanceof Error ? err.message : String(err)}`));
  }
  return { area: 'identity', store, tables, data, targets };
}
