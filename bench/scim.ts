import { ms, openBenchDb, startBenchApp, measure, stats, type AreaResult, type BenchOptions, type Table } from './lib.ts';

/**
 * SCIM service through the real HTTP stack (app in-process on loopback, keep-alive clients):
 *  - provision: N users created by SCIM POST /Users from 10 concurrent clients (each its own connection), with
 *               syncToUserManagement on, so every request also makes the Gatehouse user, membership and roles;
 *  - filter:    `filter=userName eq "..."` latency with 100,000 users in one connection, seeded with one
 *               INSERT ... SELECT generate_series (not measured), measured through HTTP one request at a time.
 */

const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ACCOUNT = 'bench-scim';
const CONCURRENCY = 10;
const PROVISION_TARGET: Record<'pglite' | 'postgres', number> = { pglite: 0, postgres: 500 };
const FILTER_P50_TARGET_MS = 5;

export async function run(o: BenchOptions): Promise<AreaResult> {
  const sizes = o.quick ? { provision: 300, seeded: 5_000, samples: 100 } : { provision: 10_000, seeded: 100_000, samples: 1_000 };
  const want = (s: string) => !o.only || o.only.includes(s);
  const bdb = await openBenchDb(o.store, 'scim');
  const app = await startBenchApp(bdb);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes, concurrency: CONCURRENCY };
  try {
    const t = await app.client.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: ACCOUNT, name: 'SCIM bench' } });
    if (t.status !== 201) throw new Error(`account create: ${t.status} ${JSON.stringify(t.body)}`);
    const newConn = async (sync: boolean) => {
      const r = await app.client.request('POST', C, { body: { source: 'okta', syncToUserManagement: sync }, headers: { 'gatehouse-tenant-id': ACCOUNT } });
      if (r.status !== 201) throw new Error(`connection create: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as { id: string; token: string };
    };

    if (want('provision')) {
      const conn = await newConn(true);
      const clients = Array.from({ length: CONCURRENCY }, () => app.newClient(conn.token));
      let next = 0;
      const latencies: number[] = [];
      o.log(`[${o.store}] provisioning ${sizes.provision} users at ${CONCURRENCY} concurrent clients`);
      const start = performance.now();
      await Promise.all(clients.map(async (c) => {
        for (let i = next++; i < sizes.provision; i = next++) {
          const r = await c.request('POST', `${S}/${conn.id}/Users`, {
            body: { schemas: [USER], userName: `p${i}@bench.test`, externalId: `ext-${i}`, name: { givenName: 'Bench', familyName: `User ${i}` }, emails: [{ value: `p${i}@bench.test`, type: 'work', primary: true }], active: true },
          });
          if (r.status !== 201) throw new Error(`provision ${i}: ${r.status} ${JSON.stringify(r.body)}`);
          latencies.push(r.ms);
        }
      }));
      const seconds = (performance.now() - start) / 1000;
      const perSecond = sizes.provision / seconds;
      const s = stats(latencies);
      data.provision = { users: sizes.provision, seconds, perSecond, latency: s };
      tables.push({
        title: `SCIM provisioning (${o.store}, ${CONCURRENCY} concurrent clients, syncToUserManagement on)`,
        columns: ['users', 'seconds', 'users/s', 'p50 ms', 'p90 ms', 'p99 ms'],
        rows: [[sizes.provision, ms(seconds, 1), ms(perSecond, 0), ms(s.p50), ms(s.p90), ms(s.p99)]],
      });
      if (PROVISION_TARGET[o.store] > 0) targets.push({ name: 'SCIM POST users/s (10 clients)', target: `>= ${PROVISION_TARGET[o.store]}`, measured: `${ms(perSecond, 0)}`, met: perSecond >= PROVISION_TARGET[o.store] });
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
      const pick = () => 1 + Math.floor(Math.random() * sizes.seeded);
      const eq = await measure(
        () => c.request('GET', `${S}/${conn.id}/Users?filter=${encodeURIComponent(`userName eq "U${pick()}@bench.test"`)}`),
        { n: sizes.samples, warmup: 20, budgetMs: 60_000, check: (r) => { if (r.status !== 200 || r.body.totalResults !== 1) throw new Error(`filter: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`); } },
      );
      const ext = await measure(
        () => c.request('GET', `${S}/${conn.id}/Users?filter=${encodeURIComponent(`externalId eq "ext-${pick()}"`)}`),
        { n: Math.min(sizes.samples, 300), warmup: 10, budgetMs: 30_000, check: (r) => { if (r.body.totalResults !== 1) throw new Error('externalId filter'); } },
      );
      const sw = await measure(
        () => c.request('GET', `${S}/${conn.id}/Users?count=10&filter=${encodeURIComponent(`userName sw "u${pick()}"`)}`),
        { n: Math.min(sizes.samples, 300), warmup: 10, budgetMs: 30_000, check: (r) => { if (r.status !== 200) throw new Error('sw filter'); } },
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
      if (!o.quick) targets.push({ name: `filter=userName eq p50 (${sizes.seeded} users)`, target: `< ${FILTER_P50_TARGET_MS} ms`, measured: `${ms(eq.p50)} ms`, met: eq.p50 < FILTER_P50_TARGET_MS });
    }
  } finally {
    await app.close();
    await bdb.destroy();
  }
  return { area: 'scim', store: o.store, tables, data, targets };
}
