import { loadavg } from 'node:os';
import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';
import { encrypt, keyFromString } from '../src/lib/crypto.ts';
import { newTotpSecret, stepAt, totpCode } from '../src/modules/mfa/totp.ts';
import {
  BENCH_ENCRYPTION_KEY,
  ms,
  openBenchDb,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
  stats,
  type AreaResult,
  type BenchApp,
  type BenchOptions,
  type HttpClient,
  type Table,
} from './lib.ts';

/**
 * TOTP MFA sign-in against plain password sign-in, in the same run, through the real HTTP stack:
 *  - plain: POST /identity/resources/auth/v1/user → tokens (users without MFA);
 *  - mfa:   the same POST → {mfaRequired, mfaToken}, then POST .../user/mfa/verify with a TOTP code → tokens.
 * `concurrency` workers (one keep-alive connection each) run flows back to back for a fixed time; the two kinds
 * alternate in rounds so load drift hits both. A TOTP step is accepted once per device, so every worker has its own
 * pool of enrolled users and takes the next one whose next step is still inside the ±1 window.
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
  const { rows: t } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [templateId]);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO users (id, email, name, password_hash, verified, active_tenant_id)
     SELECT gen_random_uuid(), $1 || g || '@bench.test', 'bench ' || g, $2, true, $3 FROM generate_series(1, $4) g RETURNING id`,
    [prefix, t[0].password_hash, ACCOUNT, n],
  );
  const ids = rows.map((r) => r.id);
  await db.query('INSERT INTO user_tenants (tenant_id, user_id) SELECT $1, unnest($2::uuid[])', [ACCOUNT, ids]);
  await db.query('INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT $1, u, r.role_id FROM unnest($2::uuid[]) u, (SELECT role_id FROM user_roles WHERE user_id = $3) r', [ACCOUNT, ids, templateId]);
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}@bench.test`);
}

interface Flow {
  kind: 'plain' | 'mfa';
  run(c: HttpClient, worker: number): Promise<number>;
}

/** Runs `flow` on every worker for `seconds`; answers completed flows and per-flow latencies (ms). */
async function drive(clients: HttpClient[], flow: Flow, seconds: number) {
  const samples: number[] = [];
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(clients.map(async (c, w) => {
    while (performance.now() < end) samples.push(await flow.run(c, w));
  }));
  const elapsed = (performance.now() - start) / 1000;
  return { flows: samples.length, perSecond: samples.length / elapsed, ...stats(samples) };
}

type Round = Awaited<ReturnType<typeof drive>> & { statements: number; transactions: number; dbMs: number };

/**
 * Counts statements, transactions (each adds a BEGIN and a COMMIT round trip, not counted as statements) and the
 * statements' time (sum of wall times, overlapping under concurrency).
 */
function countingDb(inner: ClosableDb) {
  const counter = { statements: 0, transactions: 0, ms: 0 };
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const start = performance.now();
      try {
        return await q.query<T>(sql, params);
      } finally {
        counter.statements++;
        counter.ms += performance.now() - start;
      }
    },
    transaction: (fn) => {
      counter.transactions++;
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  return { db: { ...wrap(inner), kind: inner.kind, close: () => inner.close() } as ClosableDb, counter };
}

export async function runSigninMfa(opts: BenchOptions): Promise<AreaResult> {
  const sizes = opts.quick ? QUICK : FULL;
  const { store, log } = opts;
  const bdb = await openBenchDb(store, 'signin-mfa');
  let app: BenchApp | undefined;
  try {
    const counting = countingDb(bdb.db);
    app = await startBenchApp(bdb, counting.db, { env: RAISED_SIGNIN_LIMITS });
    const v = app.client;
    const acc = await v.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: ACCOUNT, name: ACCOUNT } });
    if (acc.status !== 201) throw new Error(`account: ${acc.status} ${JSON.stringify(acc.body)}`);
    const tpl = await v.request('POST', '/identity/resources/users/v1', { body: { email: 'template@bench.test', password: PASSWORD }, headers: { 'gatehouse-tenant-id': ACCOUNT } });
    if (tpl.status !== 201) throw new Error(`template user: ${tpl.status} ${JSON.stringify(tpl.body)}`);

    const perKind = sizes.concurrency * sizes.usersPerWorker;
    log(`\n[${store}] seeding ${perKind} plain and ${perKind} MFA users (not measured)  (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
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

    const fail = (what: string, r: { status: number; body: unknown }) => new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
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
          if (tries > sizes.usersPerWorker) throw new Error('every user of this worker used its window; raise usersPerWorker');
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

    const clients = Array.from({ length: sizes.concurrency }, () => app!.newClient());
    // Warm-up: a few flows of each kind (JIT, pools, first-use caches).
    await drive(clients, plain, 0.5);
    await drive(clients, mfa, 0.5);
    const results = { plain: [] as Round[], mfa: [] as Round[] };
    for (let round = 0; round < sizes.rounds; round++) {
      for (const flow of round % 2 === 0 ? [plain, mfa] : [mfa, plain]) {
        log(`    round ${round + 1}: ${flow.kind} for ${sizes.roundSeconds} s at ${sizes.concurrency} concurrent users  (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
        const before = { ...counting.counter };
        const r = await drive(clients, flow, sizes.roundSeconds);
        results[flow.kind].push({ ...r, statements: (counting.counter.statements - before.statements) / r.flows, transactions: (counting.counter.transactions - before.transactions) / r.flows, dbMs: (counting.counter.ms - before.ms) / r.flows });
      }
    }
    const sum = (k: 'plain' | 'mfa') => {
      const rs = results[k];
      const flows = rs.reduce((a, r) => a + r.flows, 0);
      const perSecond = rs.reduce((a, r) => a + r.perSecond, 0) / rs.length;
      const p50 = rs.map((r) => r.p50).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
      const p90 = rs.map((r) => r.p90).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
      const statements = rs.reduce((a, r) => a + r.statements, 0) / rs.length;
      const transactions = rs.reduce((a, r) => a + r.transactions, 0) / rs.length;
      const dbMs = rs.reduce((a, r) => a + r.dbMs, 0) / rs.length;
      return { flows, perSecond, p50, p90, statements, transactions, dbMs };
    };
    const p = sum('plain');
    const m = sum('mfa');
    const overhead = p.perSecond / m.perSecond - 1;
    const table: Table = {
      title: `Sign-in flows at ${sizes.concurrency} concurrent users (${store}; ${sizes.rounds} round(s) of ${sizes.roundSeconds} s each)`,
      columns: ['flow', 'flows', 'flows/s', 'p50 ms', 'p90 ms', 'statements/flow', 'transactions/flow', 'db ms/flow'],
      rows: [
        ['password', p.flows, ms(p.perSecond, 1), ms(p.p50), ms(p.p90), ms(p.statements, 1), ms(p.transactions, 1), ms(p.dbMs, 1)],
        ['password + TOTP', m.flows, ms(m.perSecond, 1), ms(m.p50), ms(m.p90), ms(m.statements, 1), ms(m.transactions, 1), ms(m.dbMs, 1)],
      ],
      notes: [
        `second factor costs ${(overhead * 100).toFixed(1)}% more time per flow (password flows/s ÷ MFA flows/s − 1)`,
        'MFA flow = password sign-in answering {mfaRequired, mfaToken} + POST .../user/mfa/verify; latency is the sum of both requests',
        'statements include the audit entry each request stages; a transaction adds BEGIN and COMMIT round trips; db ms = wall time of the statements (queueing included)',
      ],
    };
    return {
      area: 'signin',
      store,
      tables: [table],
      data: { sizes, plain: results.plain, mfa: results.mfa, overhead },
      targets: [{ name: 'TOTP MFA sign-in overhead vs password sign-in', target: `< ${TARGET_OVERHEAD * 100}%`, measured: `${(overhead * 100).toFixed(1)}%`, met: overhead < TARGET_OVERHEAD }],
    };
  } finally {
    await app?.close();
    await bdb.destroy();
  }
}

export const run = runSigninMfa;
