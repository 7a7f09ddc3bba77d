import {
  callStats,
  countingDb,
  explainAnalyze,
  ms,
  openBenchDb,
  startBenchApp,
  measure,
  stats,
  type AreaResult,
  type BenchOptions,
  type CountedCall as Call,
  type HttpClient,
  type Table,
} from './lib.ts';

/**
 * SCIM service through the real HTTP stack (app in-process on loopback, keep-alive clients):
 *  - provision: N users created by SCIM POST /Users from 10 concurrent clients (each its own connection), with
 *               syncToUserManagement on, so every request also makes the Gatehouse user, membership and roles;
 *  - filter:    `filter=userName eq "..."` latency with 100,000 users in one connection, seeded with one
 *               INSERT ... SELECT generate_series (not measured), measured through HTTP one request at a time;
 *               the statement's plan (EXPLAIN) is kept in the results;
 *  - statements: the SQL statements of one SCIM POST /Users (sync on and off) and of one filtered GET, counted
 *               through a counting proxy over the Db (exact; independent of the machine's load).
 */

/** Per call: statements, transactions, round trips (BEGIN/COMMIT count), the audit hook's share, and the list. */
function summarise(label: string, calls: Call[]) {
  const { statements, transactions, roundTrips, audit, perCall } = callStats(calls);
  return {
    label,
    statements,
    transactions,
    roundTrips,
    audit,
    list: perCall.map(({ sql, perCall: k }) => ({ perCall: k, sql: sql.length > 200 ? `${sql.slice(0, 200)}…` : sql })),
  };
}

const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ACCOUNT = 'bench-scim';
const CONCURRENCY = 10;
const PROVISION_TARGET: Record<'pglite' | 'postgres', number> = { pglite: 0, postgres: 500 };
const FILTER_P50_TARGET_MS = 5;

export async function run(o: BenchOptions): Promise<AreaResult> {
  const sizes = o.quick
    ? { provision: 300, seeded: 5_000, samples: 100 }
    : { provision: 10_000, seeded: 100_000, samples: 1_000 };
  const want = (s: string) => !o.only || o.only.includes(s);
  const bdb = await openBenchDb(o.store, 'scim');
  const rec = countingDb(bdb.db);
  const app = await startBenchApp(bdb, rec.db);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes, concurrency: CONCURRENCY };
  try {
    const t = await app.client.request('POST', '/tenants/resources/tenants/v1', {
      body: { tenantId: ACCOUNT, name: 'SCIM bench' },
    });
    if (t.status !== 201) throw new Error(`account create: ${t.status} ${JSON.stringify(t.body)}`);
    const newConn = async (sync: boolean) => {
      const r = await app.client.request('POST', C, {
        body: { source: 'okta', syncToUserManagement: sync },
        headers: { 'gatehouse-tenant-id': ACCOUNT },
      });
      if (r.status !== 201) throw new Error(`connection create: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as { id: string; token: string };
    };

    if (want('statements')) {
      const N = 5;
      const user = (tag: string, i: number) => ({
        schemas: [USER],
        userName: `${tag}${i}@stmt.test`,
        externalId: `${tag}-${i}`,
        name: { givenName: 'Stmt', familyName: `User ${i}` },
        emails: [{ value: `${tag}${i}@stmt.test`, type: 'work', primary: true }],
        active: true,
      });
      const scenario = async (
        label: string,
        conn: { id: string; token: string },
        req: (c: HttpClient, i: number) => Promise<{ status: number; body: any }>,
        status: number,
      ) => {
        const c = app.newClient(conn.token);
        await req(c, -1); // warm-up (first-use caches), not recorded
        const calls: Call[] = [];
        for (let i = 0; i < N; i++) {
          const r = await rec.record(() => req(c, i));
          if (r.result.status !== status)
            throw new Error(`${label}: ${r.result.status} ${JSON.stringify(r.result.body).slice(0, 300)}`);
          calls.push(r.call);
        }
        return summarise(label, calls);
      };
      const on = await newConn(true);
      const off = await newConn(false);
      const post = (tag: string, conn: { id: string }) => (c: HttpClient, i: number) =>
        c.request('POST', `${S}/${conn.id}/Users`, { body: user(tag, i) });
      const results = [
        await scenario('POST /Users, syncToUserManagement on', on, post('on', on), 201),
        await scenario('POST /Users, syncToUserManagement off', off, post('off', off), 201),
        await scenario(
          'GET /Users?filter=userName eq',
          off,
          (c, i) =>
            c.request(
              'GET',
              `${S}/${off.id}/Users?filter=${encodeURIComponent(`userName eq "OFF${Math.max(i, 0)}@stmt.test"`)}`,
            ),
          200,
        ),
      ];
      data.statements = results;
      tables.push({
        title: `SQL statements per SCIM call (${o.store}; a transaction adds BEGIN and COMMIT round trips)`,
        columns: ['call', 'statements', 'transactions', 'round trips', 'of which audit hook'],
        rows: results.map((r) => [
          r.label,
          ms(r.statements, 1),
          ms(r.transactions, 1),
          ms(r.roundTrips, 1),
          ms(r.audit, 1),
        ]),
        notes: results.flatMap((r) => [`${r.label}:`, ...r.list.map((l) => `  ${l.perCall.toFixed(1)} × ${l.sql}`)]),
      });
    }

    if (want('provision')) {
      const conn = await newConn(true);
      const clients = Array.from({ length: CONCURRENCY }, () => app.newClient(conn.token));
      let next = 0;
      const latencies: number[] = [];
      o.log(`[${o.store}] provisioning ${sizes.provision} users at ${CONCURRENCY} concurrent clients`);
      const start = performance.now();
      await Promise.all(
        clients.map(async (c) => {
          for (let i = next++; i < sizes.provision; i = next++) {
            const r = await c.request('POST', `${S}/${conn.id}/Users`, {
              body: {
                schemas: [USER],
                userName: `p${i}@bench.test`,
                externalId: `ext-${i}`,
                name: { givenName: 'Bench', familyName: `User ${i}` },
                emails: [{ value: `p${i}@bench.test`, type: 'work', primary: true }],
                active: true,
              },
            });
            if (r.status !== 201) throw new Error(`provision ${i}: ${r.status} ${JSON.stringify(r.body)}`);
            latencies.push(r.ms);
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      const perSecond = sizes.provision / seconds;
      const s = stats(latencies);
      data.provision = { users: sizes.provision, seconds, perSecond, latency: s };
      tables.push({
        title: `SCIM provisioning (${o.store}, ${CONCURRENCY} concurrent clients, syncToUserManagement on)`,
        columns: ['users', 'seconds', 'users/s', 'p50 ms', 'p90 ms', 'p99 ms'],
        rows: [[sizes.provision, ms(seconds, 1), ms(perSecond, 0), ms(s.p50), ms(s.p90), ms(s.p99)]],
      });
      if (PROVISION_TARGET[o.store] > 0)
        targets.push({
          name: 'SCIM POST users/s (10 clients)',
          target: `>= ${PROVISION_TARGET[o.store]}`,
          measured: `${ms(perSecond, 0)}`,
          met: perSecond >= PROVISION_TARGET[o.store],
        });
    }

    if (want('filter')) {
      const conn = await newConn(false);
      o.log(`[${o.store}] seeding ${sizes.seeded} directory users by SQL`);
      await app.ctx.db.query(
        `INSERT INTO scim_users (tenant_id, connection_id, id, user_name, external_id, email, active, data)
         SELECT $1, $2::uuid, gen_random_uuid(), 'u' || i || '@bench.test', 'ext-' || i, 'u' || i || '@bench.test', true,
                jsonb_build_object('userName', 'u' || i || '@bench.test', 'externalId', 'ext-' || i, 'active', true,
                  'name', jsonb_build_object('givenName', 'Seed', 'familyName', 'User ' || i),
                  'emails', jsonb_build_array(jsonb_build_object('value', 'u' || i || '@bench.test', 'type', 'work', 'primary', true)))
         FROM generate_series(1, $3::int) AS i`,
        [ACCOUNT, conn.id, sizes.seeded],
      );
      await app.ctx.db.query('ANALYZE scim_users');
      const c = app.newClient(conn.token);
      // The plan of the statement the userName eq filter compiles to, as the server sends it.
      const probe = await rec.record(() =>
        c.request('GET', `${S}/${conn.id}/Users?filter=${encodeURIComponent('userName eq "U42@bench.test"')}`),
      );
      const stmt = probe.call.raw.find((r) => /FROM scim_users r/.test(r.sql));
      if (stmt) {
        const plan = await explainAnalyze(app.ctx.db, stmt);
        data.filterPlan = { sql: stmt.sql, params: stmt.params, plan };
        o.log(`[${o.store}] plan of the userName eq filter over ${sizes.seeded} users:\n    ${plan.join('\n    ')}`);
        const indexed =
          plan.some((l) => /Index (Only )?Scan using scim_users_user_name/.test(l)) &&
          !plan.some((l) => /Seq Scan on scim_users/.test(l));
        targets.push({
          name: `filter=userName eq plan (${sizes.seeded} users)`,
          target: 'Index Scan using scim_users_user_name',
          measured: indexed ? 'index scan' : 'other plan (see data.filterPlan)',
          met: indexed,
        });
      }
      const pick = () => 1 + Math.floor(Math.random() * sizes.seeded);
      const eq = await measure(
        () =>
          c.request('GET', `${S}/${conn.id}/Users?filter=${encodeURIComponent(`userName eq "U${pick()}@bench.test"`)}`),
        {
          n: sizes.samples,
          warmup: 20,
          budgetMs: 60_000,
          check: (r) => {
            if (r.status !== 200 || r.body.totalResults !== 1)
              throw new Error(`filter: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          },
        },
      );
      const ext = await measure(
        () => c.request('GET', `${S}/${conn.id}/Users?filter=${encodeURIComponent(`externalId eq "ext-${pick()}"`)}`),
        {
          n: Math.min(sizes.samples, 300),
          warmup: 10,
          budgetMs: 30_000,
          check: (r) => {
            if (r.body.totalResults !== 1) throw new Error('externalId filter');
          },
        },
      );
      const sw = await measure(
        () =>
          c.request('GET', `${S}/${conn.id}/Users?count=10&filter=${encodeURIComponent(`userName sw "u${pick()}"`)}`),
        {
          n: Math.min(sizes.samples, 300),
          warmup: 10,
          budgetMs: 30_000,
          check: (r) => {
            if (r.status !== 200) throw new Error('sw filter');
          },
        },
      );
      const { samples: _a, ...eqStats } = eq;
      const { samples: _b, ...extStats } = ext;
      const { samples: _c, ...swStats } = sw;
      data.filter = { users: sizes.seeded, userNameEq: eqStats, externalIdEq: extStats, userNameSw: swStats };
      tables.push({
        title: `SCIM filter over ${sizes.seeded} users in one connection (${o.store}, one client, HTTP round trip)`,
        columns: ['filter', 'n', 'p50 ms', 'p90 ms', 'p99 ms'],
        rows: [
          ['userName eq (case-insensitive)', eq.n, ms(eq.p50), ms(eq.p90), ms(eq.p99)],
          ['externalId eq', ext.n, ms(ext.p50), ms(ext.p90), ms(ext.p99)],
          ['userName sw, count=10', sw.n, ms(sw.p50), ms(sw.p90), ms(sw.p99)],
        ],
      });
      if (!o.quick)
        targets.push({
          name: `filter=userName eq p50 (${sizes.seeded} users)`,
          target: `< ${FILTER_P50_TARGET_MS} ms`,
          measured: `${ms(eq.p50)} ms`,
          met: eq.p50 < FILTER_P50_TARGET_MS,
        });
    }
  } finally {
    await app.close();
    await bdb.destroy();
  }
  return { area: 'scim', store: o.store, tables, data, targets };
}
