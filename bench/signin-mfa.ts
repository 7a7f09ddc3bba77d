import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { encrypt, keyFromString } from '../src/lib/crypto.ts';
import { newTotpSecret, stepAt, totpCode } from '../src/modules/mfa/totp.ts';
import {
  BENCH_ENCRYPTION_KEY,
  ms,
  openBenchDb,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
  type AreaResult,
  type BenchApp,
  type BenchOptions,
  type Table,
} from './lib.ts';
import { productionLikeLogger } from './loadgen.ts';
import { drive, remoteClients, type Flow } from './signin-mfa-clients.ts';
import { countingDb, cpuMeter, profiled, type CpuPerFlow } from './signin-mfa-meters.ts';

/**
 * TOTP MFA sign-in against plain password sign-in, in the same run, through the real HTTP stack:
 *  - plain: POST /identity/resources/auth/v1/user → tokens (users without MFA);
 *  - mfa:   the same POST → {mfaRequired, mfaToken}, then POST .../user/mfa/verify with a TOTP code → tokens.
 * `concurrency` workers (one keep-alive connection each) run flows back to back for a fixed time; the kinds take
 * turns in rounds so load drift hits each. A third kind, the floor (startFloorServer), prices a bare second request. A TOTP step is accepted once per device, so every worker has its own
 * pool of enrolled users and takes the next one whose next step is still inside the ±1 window. The workers run in a
 * separate client process (bench/signin-mfa-client.ts; MFA_BENCH_CLIENT=inprocess: in this process, as before).
 * Export: `runSigninMfa(opts)` (section `mfa`), registered by the lead under the area `signin`.
 */

const AUTH = '/identity/resources/auth/v1/user';
const PASSWORD = 'correct horse battery staple';
const ACCOUNT = 'bench-mfa';
const TARGET_OVERHEAD = 0.1;

interface Sizes {
  concurrency: number;
  usersPerWorker: number;
  roundSeconds: number;
  rounds: number;
}
const FULL: Sizes = { concurrency: 10, usersPerWorker: 150, roundSeconds: 10, rounds: 3 };
const QUICK: Sizes = { concurrency: 10, usersPerWorker: 40, roundSeconds: 2, rounds: 1 };

/** Seeds `n` users named `<prefix><i>@bench.test` in the bench account, copying the template user's hash and roles. */
async function seedUsers(app: BenchApp, templateId: string, prefix: string, n: number): Promise<string[]> {
  const db = app.ctx.db;
  const { rows: t } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [
    templateId,
  ]);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO users (id, email, name, password_hash, verified, active_tenant_id)
     SELECT gen_random_uuid(), $1 || g || '@bench.test', 'bench ' || g, $2, true, $3 FROM generate_series(1, $4) g RETURNING id`,
    [prefix, t[0].password_hash, ACCOUNT, n],
  );
  const ids = rows.map((r) => r.id);
  await db.query('INSERT INTO user_tenants (tenant_id, user_id) SELECT $1, unnest($2::uuid[])', [ACCOUNT, ids]);
  await db.query(
    'INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT $1, u, r.role_id FROM unnest($2::uuid[]) u, (SELECT role_id FROM user_roles WHERE user_id = $3) r',
    [ACCOUNT, ids, templateId],
  );
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}@bench.test`);
}

/**
 * The floor of a second factor: a bare Fastify server in the server's process (its logger, no hooks, no database)
 * answering a canned body of a verify answer's size. A flow of the password sign-in plus one request here costs what
 * any second request costs on this machine (client, loopback, HTTP parsing and writing), before any work of the verify.
 */
async function startFloorServer(replyBytes: number) {
  const app = Fastify({ loggerInstance: productionLikeLogger() });
  const body = JSON.stringify({ accessToken: 'x'.repeat(Math.max(0, replyBytes - 20)) });
  app.post('/floor', async (_req, reply) =>
    reply.status(201).header('content-type', 'application/json; charset=utf-8').send(body),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

type Round = Awaited<ReturnType<typeof drive>> & {
  statements: number;
  transactions: number;
  dbMs: number;
  cpu: CpuPerFlow;
  clientCpuMs?: number;
};

export async function runSigninMfa(opts: BenchOptions): Promise<AreaResult> {
  // MFA_BENCH_SIZES=concurrency,usersPerWorker,roundSeconds,rounds overrides the sizes (diagnostics).
  const custom = process.env.MFA_BENCH_SIZES?.split(',').map(Number);
  const sizes: Sizes =
    custom?.length === 4
      ? { concurrency: custom[0], usersPerWorker: custom[1], roundSeconds: custom[2], rounds: custom[3] }
      : opts.quick
        ? QUICK
        : FULL;
  const { store, log } = opts;
  const bdb = await openBenchDb(store, 'signin-mfa');
  let app: BenchApp | undefined;
  let closeClients: (() => void) | undefined;
  try {
    const counting = countingDb(bdb.db);
    // The server's logger as in production (synchronous writes, here to /dev/null), as the identity and tokens benches
    // use: startBenchApp's default asynchronous destination hands every log line to the thread pool, work the server
    // does not do (and twice as much for the two-request MFA flow).
    app = await startBenchApp(bdb, counting.db, { env: RAISED_SIGNIN_LIMITS, log: productionLikeLogger() });
    const v = app.client;
    const acc = await v.request('POST', '/tenants/resources/tenants/v1', {
      body: { tenantId: ACCOUNT, name: ACCOUNT },
    });
    if (acc.status !== 201) throw new Error(`account: ${acc.status} ${JSON.stringify(acc.body)}`);
    const tpl = await v.request('POST', '/identity/resources/users/v1', {
      body: { email: 'template@bench.test', password: PASSWORD },
      headers: { 'gatehouse-tenant-id': ACCOUNT },
    });
    if (tpl.status !== 201) throw new Error(`template user: ${tpl.status} ${JSON.stringify(tpl.body)}`);

    const perKind = sizes.concurrency * sizes.usersPerWorker;
    log(
      `\n[${store}] seeding ${perKind} plain and ${perKind} MFA users (not measured)  (load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')})`,
    );
    const plainEmails = await seedUsers(app, tpl.body.id, 'plain', perKind);
    const mfaEmails = await seedUsers(app, tpl.body.id, 'mfa', perKind);
    // One secret for every MFA user (each device still accepts a step once), sealed with the server's KEK.
    const secret = newTotpSecret();
    await app.ctx.db.query(
      `INSERT INTO mfa_devices (id, user_id, kind, secret_enc, verified_at)
       SELECT gen_random_uuid(), id, 'authenticator', $1, now() FROM users WHERE email LIKE 'mfa%@bench.test'`,
      [encrypt(keyFromString(BENCH_ENCRYPTION_KEY), secret)],
    );
    await app.ctx.db.query("UPDATE users SET mfa_enrolled = true WHERE email LIKE 'mfa%@bench.test'");
    if (store === 'postgres') await app.ctx.db.query('VACUUM ANALYZE');

    const fail = (what: string, r: { status: number; body: unknown }) =>
      new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    let plainNext = 0;
    const plain: Flow = {
      kind: 'plain',
      async run(c) {
        const email = plainEmails[plainNext++ % plainEmails.length];
        const r = await c.request('POST', AUTH, { body: { email, password: PASSWORD } });
        if (r.status !== 200 || !r.body.accessToken) throw fail('plain sign-in', r);
        return r.ms;
      },
    };
    // Worker w owns users w, w + concurrency, ...; lastStep per user keeps each code single-use and inside the window.
    const lastStep = new Map<string, number>();
    const cursor = new Array(sizes.concurrency).fill(0);
    const mfa: Flow = {
      kind: 'mfa',
      async run(c, w) {
        let email = '';
        let step = 0;
        for (let tries = 0; ; tries++) {
          if (tries > sizes.usersPerWorker)
            throw new Error('every user of this worker used its window; raise usersPerWorker');
          email = mfaEmails[w + sizes.concurrency * (cursor[w]++ % sizes.usersPerWorker)];
          const now = stepAt(Date.now());
          // The server accepts the steps now-1..now+1; in a window's last second now-1 may expire in flight, so not it.
          const lowest = Date.now() % 30_000 < 29_000 ? now - 1 : now;
          step = Math.max(lowest, (lastStep.get(email) ?? -Infinity) + 1);
          if (step <= now + 1) break;
        }
        lastStep.set(email, step);
        const r = await c.request('POST', AUTH, { body: { email, password: PASSWORD } });
        if (r.status !== 200 || !r.body.mfaToken) throw fail('mfa sign-in', r);
        const code = totpCode(secret, step);
        const r2 = await c.request('POST', `${AUTH}/mfa/verify`, { body: { mfaToken: r.body.mfaToken, value: code } });
        if (r2.status !== 201 || !r2.body.accessToken) throw fail('mfa verify', r2);
        return r.ms + r2.ms;
      },
    };

    const inProcess = process.env.MFA_BENCH_CLIENT === 'inprocess';
    // The floor flow runs with the separate client process only (the in-process mode keeps the two flows of before).
    const sample = await app.newClient().request('POST', AUTH, { body: { email: plainEmails[0], password: PASSWORD } });
    const floorServer = inProcess ? undefined : await startFloorServer(sample.bytes);
    const remote = inProcess
      ? undefined
      : await remoteClients({
          baseUrl: app.baseUrl,
          floorUrl: floorServer!.url,
          password: PASSWORD,
          secret,
          plainEmails,
          mfaEmails,
          concurrency: sizes.concurrency,
          usersPerWorker: sizes.usersPerWorker,
        });
    closeClients = () => {
      remote?.close();
      void floorServer?.app.close();
    };
    const floor: Flow = {
      kind: 'floor',
      run: () => Promise.reject(new Error('the floor flow runs in the client process only')),
    };
    const clients = inProcess ? Array.from({ length: sizes.concurrency }, () => app!.newClient()) : [];
    const run = (flow: Flow, seconds: number) =>
      remote ? remote.drive(flow.kind, seconds) : drive(clients, flow, seconds);
    // Warm-up: a few flows of each kind (JIT, pools, first-use caches).
    await run(plain, 0.5);
    await run(mfa, 0.5);
    if (remote) await run(floor, 0.5);
    counting.bySql?.clear();
    // After the warm-up: the pool's connections are open (their backends are the ones measured).
    const meter = await cpuMeter(app.ctx.db, store);
    const results = { plain: [] as Round[], mfa: [] as Round[], floor: [] as Round[] };
    const kinds = remote ? [plain, mfa, floor] : [plain, mfa];
    for (let round = 0; round < sizes.rounds; round++) {
      // Each round starts with another kind, so drift in machine load hits every kind alike.
      for (const flow of kinds.map((_, i) => kinds[(i + round) % kinds.length])) {
        log(
          `    round ${round + 1}: ${flow.kind} for ${sizes.roundSeconds} s at ${sizes.concurrency} concurrent users  (load average ${loadavg()
            .map((x) => x.toFixed(2))
            .join(' ')})`,
        );
        const before = { ...counting.counter };
        const cpuStart = meter.start();
        const r = await profiled(`${store}-${flow.kind}-${round + 1}`, () => run(flow, sizes.roundSeconds));
        if (counting.bySql) {
          for (const [k, e] of [...counting.bySql].sort((a, b) => b[1].ms - a[1].ms))
            log(
              `      ${(e.ms / r.flows).toFixed(2).padStart(7)} ms/flow ${(e.n / r.flows).toFixed(2).padStart(5)}/flow ${(e.ms / e.n).toFixed(2).padStart(6)} ms each  ${k}`,
            );
          counting.bySql.clear();
        }
        const cpu = meter.perFlow(cpuStart, r.flows, 'clientCpuMs' in r ? (r.clientCpuMs as number) : undefined);
        results[flow.kind].push({
          ...r,
          cpu,
          statements: (counting.counter.statements - before.statements) / r.flows,
          transactions: (counting.counter.transactions - before.transactions) / r.flows,
          dbMs: (counting.counter.ms - before.ms) / r.flows,
        });
      }
    }
    const sum = (k: Flow['kind']) => {
      const rs = results[k];
      const flows = rs.reduce((a, r) => a + r.flows, 0);
      const perSecond = rs.reduce((a, r) => a + r.perSecond, 0) / rs.length;
      const p50 = rs.map((r) => r.p50).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
      const p90 = rs.map((r) => r.p90).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
      const statements = rs.reduce((a, r) => a + r.statements, 0) / rs.length;
      const transactions = rs.reduce((a, r) => a + r.transactions, 0) / rs.length;
      const dbMs = rs.reduce((a, r) => a + r.dbMs, 0) / rs.length;
      // CPU per flow over all rounds (each round weighted by its flows).
      const cpuOf = (f: keyof CpuPerFlow) => rs.reduce((a, r) => a + r.cpu[f] * r.flows, 0) / flows;
      return {
        flows,
        perSecond,
        p50,
        p90,
        statements,
        transactions,
        dbMs,
        cpu: { server: cpuOf('server'), main: cpuOf('main'), database: cpuOf('database'), client: cpuOf('client') },
      };
    };
    const p = sum('plain');
    const m = sum('mfa');
    const fl = results.floor.length ? sum('floor') : undefined;
    const floorOverhead = fl ? p.perSecond / fl.perSecond - 1 : undefined;
    const overhead = p.perSecond / m.perSecond - 1;
    const cpuOverhead = (m.cpu.server + m.cpu.database) / (p.cpu.server + p.cpu.database) - 1;
    const table: Table = {
      title: `Sign-in flows at ${sizes.concurrency} concurrent users (${store}; ${sizes.rounds} round(s) of ${sizes.roundSeconds} s each)`,
      columns: [
        'flow',
        'flows',
        'flows/s',
        'p50 ms',
        'p90 ms',
        'statements/flow',
        'transactions/flow',
        'db ms/flow',
        'server CPU ms/flow',
        'of which main thread',
        'PostgreSQL CPU ms/flow',
        'client CPU ms/flow',
      ],
      rows: [
        [
          'password',
          p.flows,
          ms(p.perSecond, 1),
          ms(p.p50),
          ms(p.p90),
          ms(p.statements, 1),
          ms(p.transactions, 1),
          ms(p.dbMs, 1),
          ms(p.cpu.server, 2),
          ms(p.cpu.main, 2),
          ms(p.cpu.database, 2),
          ms(p.cpu.client, 2),
        ],
        [
          'password + TOTP',
          m.flows,
          ms(m.perSecond, 1),
          ms(m.p50),
          ms(m.p90),
          ms(m.statements, 1),
          ms(m.transactions, 1),
          ms(m.dbMs, 1),
          ms(m.cpu.server, 2),
          ms(m.cpu.main, 2),
          ms(m.cpu.database, 2),
          ms(m.cpu.client, 2),
        ],
        ...(fl
          ? [
              [
                'password + bare request (floor)',
                fl.flows,
                ms(fl.perSecond, 1),
                ms(fl.p50),
                ms(fl.p90),
                ms(fl.statements, 1),
                ms(fl.transactions, 1),
                ms(fl.dbMs, 1),
                ms(fl.cpu.server, 2),
                ms(fl.cpu.main, 2),
                ms(fl.cpu.database, 2),
                ms(fl.cpu.client, 2),
              ],
            ]
          : []),
      ],
      notes: [
        `second factor costs ${(overhead * 100).toFixed(1)}% more time per flow (password flows/s ÷ MFA flows/s − 1)`,
        `per rounds: password ${results.plain.map((r) => r.perSecond.toFixed(1)).join(' / ')} flows/s, MFA ${results.mfa.map((r) => r.perSecond.toFixed(1)).join(' / ')}${fl ? `, floor ${results.floor.map((r) => r.perSecond.toFixed(1)).join(' / ')}` : ''}`,
        ...(fl && floorOverhead !== undefined
          ? [
              `floor (not a target): the password flow plus one request of the verify's size to a bare Fastify route in the server's process (its logger, no hooks, no database) costs ${(floorOverhead * 100).toFixed(1)}% more than the password flow: what a second request costs on this machine before any work of the verify; the verify's own work has the rest of the 10 %`,
            ]
          : []),
        `by CPU (server process + PostgreSQL backends per flow): the second factor costs ${(cpuOverhead * 100).toFixed(1)}% more (a steadier comparison on a shared machine; the target is read on flows/s)${Number.isNaN(m.cpu.client) ? '' : `; with the client process's CPU added (it shares this machine's 2 CPUs): ${(((m.cpu.server + m.cpu.database + m.cpu.client) / (p.cpu.server + p.cpu.database + p.cpu.client) - 1) * 100).toFixed(1)}%`}`,
        'MFA flow = password sign-in answering {mfaRequired, mfaToken} + POST .../user/mfa/verify; latency is the sum of both requests',
        "server CPU = the whole server process (event loop, argon2 threads, PGlite); PostgreSQL CPU = the bench database's backends",
        'statements include the audit entry each request stages; a transaction adds BEGIN and COMMIT round trips; db ms = wall time of the statements (queueing included)',
        inProcess
          ? "HTTP clients in the server's process (MFA_BENCH_CLIENT=inprocess): their work is charged to the server's event loop"
          : 'HTTP clients in a separate process (bench/signin-mfa-client.ts), one keep-alive connection per worker; server and clients unpinned',
      ],
    };
    return {
      area: 'signin',
      store,
      tables: [table],
      data: {
        sizes,
        clients: inProcess ? 'in-process' : 'separate process',
        plain: results.plain,
        mfa: results.mfa,
        floor: results.floor,
        overhead,
        cpuOverhead,
        floorOverhead,
      },
      targets: [
        {
          name: 'TOTP MFA sign-in overhead vs password sign-in',
          target: `< ${TARGET_OVERHEAD * 100}%`,
          measured: `${(overhead * 100).toFixed(1)}%`,
          met: overhead < TARGET_OVERHEAD,
        },
      ],
    };
  } finally {
    closeClients?.();
    await app?.close();
    await bdb.destroy();
  }
}

export const run = runSigninMfa;
