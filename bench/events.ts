import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { openBenchDb, startBenchApp, type AreaResult, type BenchApp, type BenchOptions, type Table } from './lib.ts';

/**
 * Events, webhooks and audit:
 *  - overhead: users created per second (vendor POST, no password: the cheapest write, so the overhead shows) by an
 *    app with the outbox and the audit log on, and by one with both off (EVENTS_ENABLED=false, AUDIT_ENABLED=false),
 *    over the same database, rounds interleaved (off, on, off, on, ...) so drift hits both alike;
 *  - delivery: webhook deliveries per second to a local receiver (HTTP 204), N events emitted in one transaction,
 *    measured from the dispatcher's start to the last recorded success.
 */

const USERS = '/identity/resources/users/v1';
const FULL = { perRound: 1500, rounds: 3, clients: 8, deliveries: 5000 };
const QUICK = { perRound: 150, rounds: 2, clients: 4, deliveries: 300 };
const OVERHEAD_TARGET = 0.15;

async function createUsers(
  app: BenchApp,
  tenantId: string,
  prefix: string,
  n: number,
  clients: number,
): Promise<number> {
  const pool = Array.from({ length: clients }, () => app.newClient(app.vendorToken));
  let next = 0;
  const start = performance.now();
  await Promise.all(
    pool.map(async (c) => {
      for (let i = next++; i < n; i = next++) {
        const r = await c.request('POST', USERS, {
          body: { email: `${prefix}-${i}@bench.test`, name: `U ${i}` },
          headers: { 'gatehouse-tenant-id': tenantId },
        });
        if (r.status !== 201) throw new Error(`create user: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  for (const c of pool) c.close();
  return n / seconds;
}

export async function run(opts: BenchOptions): Promise<AreaResult> {
  const { store, log } = opts;
  const sizes = opts.quick ? QUICK : FULL;
  const want = (name: string) => !opts.only || opts.only.includes(name);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes, loadAverage: {} as Record<string, number[]> };
  const section = (key: string, title: string) => {
    (data.loadAverage as Record<string, number[]>)[key] = loadavg().map((x) => Number(x.toFixed(2)));
    log(`\n[${store}] ${title}`);
  };

  const bdb = await openBenchDb(store, 'events');
  const apps: BenchApp[] = [];
  try {
    // Jobs (and with them the dispatcher) run in the "on" app, as in a server; no webhook is configured, so the
    // dispatcher only marks events dispatched: the outbox's full cost on the write path and behind it.
    const on = await startBenchApp(bdb, bdb.db, { jobs: true });
    apps.push(on);
    const off = await startBenchApp(bdb, bdb.db, {
      jobs: false,
      env: { EVENTS_ENABLED: 'false', AUDIT_ENABLED: 'false' },
    });
    apps.push(off);
    const tenant = await on.client.request('POST', '/tenants/resources/tenants/v1', {
      body: { tenantId: 'bench-events', name: 'Bench events' },
    });
    if (tenant.status !== 201) throw new Error(`create account: HTTP ${tenant.status}`);

    if (want('overhead')) {
      section(
        'overhead',
        `1. overhead: users/s created at ${sizes.clients} clients, outbox+audit on vs off, ${sizes.rounds} interleaved rounds of ${sizes.perRound}`,
      );
      await createUsers(off, 'bench-events', 'warm-off', 50, sizes.clients);
      await createUsers(on, 'bench-events', 'warm-on', 50, sizes.clients);
      const rates = { on: [] as number[], off: [] as number[] };
      for (let r = 0; r < sizes.rounds; r++) {
        rates.off.push(await createUsers(off, 'bench-events', `off-${r}`, sizes.perRound, sizes.clients));
        rates.on.push(await createUsers(on, 'bench-events', `on-${r}`, sizes.perRound, sizes.clients));
        await on.ctx.audit.flush();
        log(`  round ${r + 1}: off ${rates.off[r].toFixed(0)} users/s, on ${rates.on[r].toFixed(0)} users/s`);
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const mOn = median(rates.on);
      const mOff = median(rates.off);
      const overhead = 1 - mOn / mOff;
      const events = Number(
        (await bdb.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE event_key = 'user.created'"))
          .rows[0].n,
      );
      const audits = Number((await bdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log')).rows[0].n);
      data.overhead = { rates, medianOn: mOn, medianOff: mOff, overhead, events, audits };
      tables.push({
        title: `users/s created (vendor POST ${USERS}, ${sizes.clients} clients, median of ${sizes.rounds} rounds)`,
        columns: ['outbox + audit', 'users/s', 'rounds'],
        rows: [
          ['off', Number(mOff.toFixed(0)), rates.off.map((x) => x.toFixed(0)).join(' ')],
          ['on', Number(mOn.toFixed(0)), rates.on.map((x) => x.toFixed(0)).join(' ')],
        ],
        notes: [
          `overhead ${(overhead * 100).toFixed(1)}%; ${events} user.created events and ${audits} audit entries written by the "on" app`,
        ],
      });
      targets.push({
        name: 'outbox + audit overhead on user creation',
        target: `< ${OVERHEAD_TARGET * 100}%`,
        measured: `${(overhead * 100).toFixed(1)}%`,
        met: overhead < OVERHEAD_TARGET,
      });
    }

    if (want('delivery')) {
      section('delivery', `2. delivery: ${sizes.deliveries} events to one local receiver (204)`);
      await on.ctx.jobs.stop();
      let received = 0;
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          received++;
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        const h = await on.client.request('POST', '/webhook/custom', {
          body: { displayName: 'bench', url, secret: 'bench-secret-0123456789', eventKeys: ['account.updated'] },
        });
        if (h.status !== 201) throw new Error(`create webhook: HTTP ${h.status} ${JSON.stringify(h.body)}`);
        // Many entities (one per 10 events), so per-entity ordering still leaves room for parallel delivery.
        await bdb.db.transaction((tx) =>
          on.ctx.events.emitMany(
            tx,
            Array.from({ length: sizes.deliveries }, (_, i) => ({
              eventKey: 'account.updated' as const,
              tenantId: `bench-${i % Math.ceil(sizes.deliveries / 10)}`,
              entity: { type: 'account', id: `bench-${i % Math.ceil(sizes.deliveries / 10)}` },
              data: { i },
            })),
          ),
        );
        const start = performance.now();
        on.ctx.jobs.start();
        for (;;) {
          const { rows } = await bdb.db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'",
          );
          if (Number(rows[0].n) >= sizes.deliveries) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const seconds = (performance.now() - start) / 1000;
        const rate = sizes.deliveries / seconds;
        data.delivery = {
          events: sizes.deliveries,
          seconds,
          perSecond: rate,
          received,
          concurrency: on.ctx.config.webhooks.concurrency,
        };
        tables.push({
          title: 'webhook delivery to a local receiver (fan-out + signed POST + recorded outcome)',
          columns: ['events', 'seconds', 'events/s', 'concurrency'],
          rows: [
            [sizes.deliveries, Number(seconds.toFixed(2)), Number(rate.toFixed(0)), on.ctx.config.webhooks.concurrency],
          ],
        });
      } finally {
        await new Promise((r) => server.close(r));
      }
    }
  } finally {
    for (const a of apps) await a.close().catch(() => {});
    await bdb.destroy();
  }
  return { area: 'events', store, tables, data, targets };
}
