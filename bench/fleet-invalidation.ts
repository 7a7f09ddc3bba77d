import { performance } from 'node:perf_hooks';
import { ms, openBenchDb, startBenchApp, stats, type AreaResult, type BenchOptions, type Table } from './lib.ts';

/**
 * Cache invalidation across instances: two servers (in this process, each with its own pool and its own LISTEN
 * connection) over one database. Instance one changes the branding N times (PUT over HTTP); for each change this
 * measures, from the moment the request was sent:
 *  - response:  instance one answers (the write committed and the NOTIFY left with the commit);
 *  - dropped:   instance two's settings handler ran (its cached copy is gone);
 *  - visible:   instance two's GET /branding answers the new value (polled every 2 ms).
 * Target: visible on instance two within 1 s (max); the caches' TTLs (2-5 s, 60 s for keys) are the fallback only.
 */

const FULL = { changes: 200 };
const QUICK = { changes: 20 };
const TOPIC = 'environment.settings';
const BRANDING = '/identity/resources/configurations/v1/branding';

export async function run(o: BenchOptions): Promise<AreaResult> {
  const sizes = o.quick ? QUICK : FULL;
  const bdb = await openBenchDb(o.store, 'fleet');
  const one = await startBenchApp(bdb);
  const two = await startBenchApp(bdb);
  try {
    if (!two.ctx.invalidation.connected) throw new Error('instance two does not listen');
    let dropped: (() => void) | undefined;
    two.ctx.invalidation.subscribe(TOPIC, () => dropped?.());
    const reader = two.newClient();
    const response: number[] = [];
    const drop: number[] = [];
    const visible: number[] = [];
    // Warm both instances (first reads, prepared statements).
    await reader.request('GET', BRANDING);
    await one.client.request('PUT', BRANDING, { body: { name: 'warm' } });
    for (let i = 0; i < sizes.changes; i++) {
      const name = `fleet ${i}`;
      const droppedAt = new Promise<number>((resolve) => {
        dropped = () => resolve(performance.now());
      });
      // Instance two holds the old value in its cache before each change.
      await reader.request('GET', BRANDING);
      const sent = performance.now();
      const put = await one.client.request('PUT', BRANDING, { body: { name } });
      if (put.status !== 200) throw new Error(`PUT branding: HTTP ${put.status}`);
      response.push(performance.now() - sent);
      const deadline = sent + 5000;
      for (;;) {
        const r = await reader.request('GET', BRANDING);
        if (r.body?.name === name) break;
        if (performance.now() > deadline) throw new Error(`change ${i} not visible on instance two within 5 s`);
        await new Promise((res) => setTimeout(res, 2));
      }
      visible.push(performance.now() - sent);
      drop.push((await droppedAt) - sent);
    }
    const row = (what: string, s: number[]) => {
      const st = stats(s);
      return [what, st.n, ms(st.p50), ms(st.p90), ms(st.p99), ms(st.max)];
    };
    const table: Table = {
      title: `fleet-invalidation (${o.store}): ms from the PUT sent on instance one`,
      columns: ['measure', 'n', 'p50', 'p90', 'p99', 'max'],
      rows: [row('response on one', response), row('dropped on two', drop), row('visible on two', visible)],
      notes: ['both instances in one process; instance two polls every 2 ms, so visible includes up to one poll'],
    };
    const maxVisible = Math.max(...visible);
    return {
      area: 'fleet-invalidation',
      store: o.store,
      tables: [table],
      data: { changes: sizes.changes, response: stats(response), dropped: stats(drop), visible: stats(visible) },
      targets: [
        {
          name: 'change visible on instance two',
          target: '≤ 1000 ms (max)',
          measured: `${ms(maxVisible)} ms`,
          met: maxVisible <= 1000,
        },
      ],
    };
  } finally {
    await two.close();
    await one.close();
    await bdb.destroy();
  }
}
