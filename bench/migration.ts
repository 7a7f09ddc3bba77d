import { loadavg } from 'node:os';
import { ms, openBenchDb, type AreaResult, type BenchOptions, type Table } from './lib.ts';
import { measureBulk, measureIdleAccept } from './migration-bulk.ts';
import {
  ACCEPT_TARGET_MS,
  BULK_TARGET_USERS_PER_S,
  FULL,
  LOGIN,
  M,
  QUICK,
  requestsOverride,
  startApp,
  type App,
} from './migration-config.ts';
import { measureRawInsert } from './migration-raw-insert.ts';
import { measureSignin } from './migration-signin.ts';

/**
 * User migration through the real HTTP stack, in-process:
 *  - bulk:    N users in N/1000 POST .../local/bulk requests (half with an imported hash, half without; some with a
 *             phone number, metadata, verifyUser), users per second end to end until every status is "completed";
 *             then, on the same database, the raw insert rate of the same rows (multi-row INSERTs of users,
 *             memberships, role assignments, applications and phones, no HTTP, no job, no checks): the ceiling.
 *  - accept:  the time to answer 202 to one 1000-user request, while the import jobs run (the bulk run) and on an
 *             idle server.
 *  - signin:  the first sign-in of an imported user per hash type (verify the imported hash, rehash to argon2id in the
 *             sign-in transaction), and a second sign-in of the same users (argon2id, no rehash) for comparison.
 */

// ---------------------------------------------------------------------------------------------------------------

export async function run(opts: BenchOptions): Promise<AreaResult> {
  const { store, log } = opts;
  const sizes = { ...(opts.quick ? QUICK : FULL), ...(requestsOverride ? { requests: requestsOverride } : {}) };
  const want = (name: string) => !opts.only || opts.only.includes(name);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes };
  const load: Record<string, number[]> = {};
  data.loadAverage = load;
  const section = (key: string, title: string) => {
    load[key] = loadavg().map((x) => Number(x.toFixed(2)));
    log(`\n[${store}] ${title}  (load average ${load[key].join(' ')})`);
  };

  const bdb = await openBenchDb(store, 'usermig');
  let app: App | undefined;
  try {
    app = await startApp(bdb, bdb.db);
    // One default environment role, so every migrated user gets a role assignment (a realistic setup).
    const role = await app.client.request('POST', '/identity/resources/roles/v1', {
      body: [{ key: 'bench-member', name: 'Member', isDefault: true, level: 1 }],
    });
    if (role.status !== 201)
      throw new Error(`create role: HTTP ${role.status} ${JSON.stringify(role.body).slice(0, 300)}`);
    const accounts = Array.from({ length: sizes.accounts }, (_, i) => `bench-acc-${i}`);
    for (const tenantId of accounts) {
      const r = await app.client.request('POST', '/tenants/resources/tenants/v1', {
        body: { tenantId, name: `Bench ${tenantId}` },
      });
      if (r.status !== 201) throw new Error(`create account: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    }

    if (want('bulk') || want('accept')) {
      section(
        'bulk',
        `1. bulk: ${sizes.requests} POST ${M}/local/bulk of ${sizes.perRequest} users, jobs in-process (chunk ${app.ctx.userMigration.chunkSize})`,
      );
      const bulk = await measureBulk(app, bdb.db, sizes, accounts, log);
      data.bulk = bulk;
      section(
        'raw',
        `   raw insert of the same rows (${sizes.requests} transactions of ${sizes.perRequest} users, multi-row INSERT per table)`,
      );
      const raw = await measureRawInsert(bdb.db, sizes, accounts, log);
      data.rawInsert = raw;
      section('accept', `2. accept: one ${sizes.perRequest}-user request on an idle server`);
      const idle = await measureIdleAccept(app, sizes, accounts, log);
      data.idleAccept = idle;

      tables.push({
        title: `[${store}] bulk user migration: ${bulk.users.toLocaleString('en-US')} users in ${bulk.requests} requests of ${bulk.perRequest}`,
        columns: ['measure', 'value'],
        rows: [
          ['end to end (first POST to last "completed")', `${(bulk.endToEndMs / 1000).toFixed(2)} s`],
          ['users/s end to end', Math.round(bulk.usersPerSecond)],
          [
            'server span (first createdAt → last completedAt)',
            `${(bulk.serverSpanMs / 1000).toFixed(2)} s = ${Math.round(bulk.users / (bulk.serverSpanMs / 1000))} users/s`,
          ],
          ['raw insert of the same rows: users/s (ceiling)', Math.round(raw.usersPerSecond)],
          ['end to end / raw', `${((bulk.usersPerSecond / raw.usersPerSecond) * 100).toFixed(0)} %`],
          ['submitting all requests', `${(bulk.submitMs / 1000).toFixed(2)} s`],
        ],
        notes: [
          `Half the users carry an imported hash (7 types in turn), 1 in 10 a phone number, 1 in 5 metadata, 1 in 3 verifyUser; ${sizes.accounts} accounts; request body p50 ${Math.round(bulk.requestBytes.p50 / 1024)} KiB.`,
          `Rows: ${JSON.stringify(bulk.rows)} (users, memberships, role assignments, phones); ${raw.defaultRoles} default role(s) and ${raw.applications} default application(s) per user.`,
          'Raw insert: the same rows with one multi-row INSERT (jsonb_to_recordset) per table per 1000 users, in one transaction each, straight on the Db; no HTTP, job, checks or JSON items.',
        ],
      });
      tables.push({
        title: `[${store}] accepting one ${sizes.perRequest}-user request (202)`,
        columns: ['case', 'n', 'p50 ms', 'p99 ms', 'max ms'],
        rows: [
          [
            'while the import jobs run (the bulk run)',
            bulk.post.n,
            ms(bulk.post.p50, 1),
            ms(bulk.post.p99, 1),
            ms(bulk.post.max, 1),
          ],
          ['idle server', idle.n, ms(idle.p50, 1), ms(idle.p99, 1), ms(idle.max, 1)],
        ],
      });
      targets.push({
        name:
          store === 'postgres'
            ? `bulk users/s end to end ≥ ${BULK_TARGET_USERS_PER_S} (PostgreSQL)`
            : `bulk users/s end to end (target ≥ ${BULK_TARGET_USERS_PER_S} is PostgreSQL's)`,
        target: `${BULK_TARGET_USERS_PER_S}/s`,
        measured: `${Math.round(bulk.usersPerSecond)}/s (raw ${Math.round(raw.usersPerSecond)}/s)`,
        met: bulk.usersPerSecond >= BULK_TARGET_USERS_PER_S,
      });
      const worst = Math.max(bulk.post.max, idle.max);
      targets.push({
        name: `1000-user request accepted < ${ACCEPT_TARGET_MS} ms (max)`,
        target: `${ACCEPT_TARGET_MS} ms`,
        measured: `max ${worst.toFixed(1)} ms (p50 ${bulk.post.p50.toFixed(1)} loaded, ${idle.p50.toFixed(1)} idle)`,
        met: worst < ACCEPT_TARGET_MS,
      });
    }

    if (want('signin')) {
      section('signin', `3. first sign-in of imported users, ${sizes.signinUsers} per hash type`);
      const si = await measureSignin(app, bdb.db, sizes, accounts, log);
      data.signin = si;
      tables.push({
        title: `[${store}] first sign-in of an imported user (POST ${LOGIN}), ${sizes.signinUsers} users per type, sequential`,
        columns: [
          'hash type',
          'parameters',
          'raw verify p50 ms',
          'first sign-in p50 ms',
          'p90 ms',
          'second sign-in p50 ms',
        ],
        rows: si.rows.map((r) => [
          r.type,
          r.params,
          ms(r.rawVerify.p50, 1),
          ms(r.first.p50, 1),
          ms(r.first.p90, 1),
          ms(r.second.p50, 1),
        ]),
        notes: [
          `First sign-in = verify the imported hash + argon2id rehash (m=19456 t=2 p=1, raw ${si.rehash.p50.toFixed(1)} ms p50 here) written in the sign-in transaction + session and tokens.`,
          'Second sign-in: the same users again, now argon2id (no rehash). Raw verify: the hasher on the stored string, in-process.',
        ],
      });
    }
    return { area: 'migration', store, tables, data, targets };
  } finally {
    await app?.close().catch(() => {});
    await bdb.destroy().catch(() => {});
  }
}
