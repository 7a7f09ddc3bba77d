import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  CONNECTIONS,
  LARGE,
  LARGE_QUICK,
  LOAD_TARGET_MS,
  PROPAGATION_TARGET_MS,
  RSS_TARGET_MB,
  SMALL,
  THROUGHPUT_RATIO_TARGET,
  UNCHANGED_RATIO,
} from './agent-config.ts';
import { cannon, requestMix, sanity, type LoadResult } from './agent-load.ts';
import { loadLog, rssMb, startAgent, startBaseline, startServer, stopProc, type Proc } from './agent-processes.ts';
import { propagation } from './agent-propagation.ts';
import { quiet, type LoadRecord } from './agent-quiet.ts';
import { counts, seed } from './agent-seed.ts';
import { ms, openBenchDb, type AreaResult, type BenchDb, type BenchOptions, type Table } from './lib.ts';

/**
 * The entitlements agent as deployed: a real server process feeding a real agent process (src/agent.ts), as
 * test/agent.test.ts spawns them.
 *   throughput   decisions/s of one agent at 50 connections (autocannon, in this process) against a trivial Fastify
 *                JSON route in its own process, same machine, same run; p50/p99 latency; a feature/permission/route mix
 *   large        a snapshot of 10,000 accounts, 100 features, 20 plans, 50,000 grants seeded by SQL: load time as the
 *                agent logs it (fetch, parse, compile), agent RSS, and decisions/s against the small snapshot
 *   propagation  a management write (grant created or removed) to the first agent decision that reflects it, with the
 *                default AGENT_POLL_MS (1000)
 * Before each measured block the 1-minute load average must be ≤ 1.2 (waits 30 s at a time, up to 10 minutes in all
 * for the run); the load is recorded with the figures either way.
 */

export { PROBE } from './agent-seed.ts';

// ---------------------------------------------------------------------------------------------------------------

export async function run(o: BenchOptions): Promise<AreaResult> {
  const want = (s: string) => !o.only || o.only.includes(s);
  const seconds = o.quick ? 2 : 10;
  const warmup = o.quick ? 1 : 3;
  const rounds = o.quick ? 1 : 2;
  const changes = o.quick ? 4 : 20;
  const large = o.quick ? LARGE_QUICK : LARGE;
  const loads: LoadRecord[] = [];
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { connections: CONNECTIONS, seconds, rounds, small: SMALL, large };
  const procs: Proc[] = [];
  const dbs: BenchDb[] = [];
  const agentDirs: string[] = [];
  try {
    o.log('seeding the small and the large snapshot (SQL)…');
    const smallDb = await openBenchDb(o.store, 'agentsmall');
    dbs.push(smallDb);
    const smallSeed = await seed(smallDb.db, SMALL);
    data.smallCounts = await counts(smallDb.db);
    await smallDb.close();
    const largeDb = await openBenchDb(o.store, 'agentlarge');
    dbs.push(largeDb);
    const largeSeed = await seed(largeDb.db, large);
    data.largeCounts = await counts(largeDb.db);
    data.largeSeedMs = ms(largeSeed.ms, 0);
    await largeDb.close();
    o.log(`  large: ${JSON.stringify(data.largeCounts)} in ${largeSeed.ms.toFixed(0)} ms`);

    const s1 = await startServer(smallDb);
    procs.push(s1.p);
    const s2 = await startServer(largeDb);
    procs.push(s2.p);
    const base = await startBaseline();
    procs.push(base.p);

    const a1 = await startAgent(s1.url, smallSeed.offset);
    procs.push(a1.p);
    agentDirs.push(a1.dir);
    const smallLoad = loadLog(a1);

    // (b) the large snapshot's load, measured on a quiet machine.
    loads.push(await quiet('large snapshot load', o));
    const a2 = await startAgent(s2.url, largeSeed.offset);
    procs.push(a2.p);
    agentDirs.push(a2.dir);
    const largeLoad = loadLog(a2)!;
    await new Promise((r) => setTimeout(r, 1000));
    const rssAfterLoad = rssMb(a2.p.proc.pid!);
    const rssSmall = rssMb(a1.p.proc.pid!);
    const loadMs = (largeLoad.fetchMs ?? NaN) + (largeLoad.parseMs ?? NaN) + (largeLoad.compileMs ?? NaN);
    data.loadLog = { small: smallLoad, large: largeLoad };
    tables.push({
      title:
        'snapshot load by the agent (its own log: fetch = GET of the snapshot incl. server build; store = atomic write to disk)',
      columns: [
        'snapshot',
        'bytes',
        'fetch ms',
        'parse ms',
        'compile ms',
        'store ms',
        'fetch+parse+compile ms',
        'spawn→ready ms',
        'RSS after load MB',
      ],
      rows: [
        [
          'small',
          smallLoad?.bytes ?? null,
          smallLoad?.fetchMs ?? null,
          smallLoad?.parseMs ?? null,
          smallLoad?.compileMs ?? null,
          smallLoad?.storeMs ?? null,
          ms((smallLoad?.fetchMs ?? NaN) + (smallLoad?.parseMs ?? NaN) + (smallLoad?.compileMs ?? NaN), 1),
          ms(a1.spawnToReadyMs, 0),
          rssSmall.rss,
        ],
        [
          'large',
          largeLoad.bytes,
          largeLoad.fetchMs,
          largeLoad.parseMs,
          largeLoad.compileMs,
          largeLoad.storeMs,
          ms(loadMs, 1),
          ms(a2.spawnToReadyMs, 0),
          rssAfterLoad.rss,
        ],
      ],
      notes: [
        `large: ${JSON.stringify(data.largeCounts)}`,
        'spawn→ready includes node + tsx start-up and vendor sign-in',
      ],
    });

    // (a) + (b) throughput: baseline, small-snapshot agent, large-snapshot agent, back to back, `rounds` times.
    const runs: { round: number; target: string; r: LoadResult }[] = [];
    if (want('throughput') || want('large')) {
      const smallMix = requestMix(SMALL);
      const largeMix = requestMix(large);
      const baseMix = smallMix.map((r) => ({ ...r }));
      data.sanity = { small: await sanity(a1.url, smallMix), large: await sanity(a2.url, largeMix) };
      loads.push(await quiet('throughput', o));
      for (const [url, mix] of [
        [base.url, baseMix],
        [a1.url, smallMix],
        [a2.url, largeMix],
      ] as const)
        await cannon(url, mix, warmup);
      for (let round = 1; round <= rounds; round++) {
        for (const [target, url, mix] of [
          ['fastify baseline', base.url, baseMix],
          ['agent, small snapshot', a1.url, smallMix],
          ['agent, large snapshot', a2.url, largeMix],
        ] as const) {
          const r = await cannon(url, mix, seconds);
          o.log(
            `  round ${round} ${target}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
          );
          runs.push({ round, target, r });
        }
      }
      data.loadAverageAfterThroughput = loadavg().map((x) => Number(x.toFixed(2)));
    }
    const rssAfterRun = rssMb(a2.p.proc.pid!);
    data.rss = { smallAgent: rssSmall, largeAfterLoad: rssAfterLoad, largeAfterThroughput: rssAfterRun };
    const mean = (t: string, k: 'rps' | 'p50' | 'p99') => {
      const xs = runs.filter((x) => x.target === t).map((x) => x.r[k]);
      return xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
    };
    if (runs.length) {
      tables.push({
        title: `decisions at ${CONNECTIONS} connections (autocannon, ${seconds} s per run; mix 50% feature, 30% permission, 20% route)`,
        columns: ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'mean ms', 'non-2xx', 'errors'],
        rows: runs.map(({ round, target, r }) => [
          round,
          target,
          r.rps,
          r.p50,
          r.p99,
          ms(r.mean, 2),
          r.non2xx,
          r.errors,
        ]),
      });
    }
    const baseRps = mean('fastify baseline', 'rps');
    const smallRps = mean('agent, small snapshot', 'rps');
    const largeRps = mean('agent, large snapshot', 'rps');
    data.throughput = { baseRps, smallRps, largeRps, runs };
    if (runs.length) {
      targets.push({
        name: 'agent decisions/s vs trivial Fastify route',
        target: `≥ ${THROUGHPUT_RATIO_TARGET * 100}%`,
        measured: `${((smallRps / baseRps) * 100).toFixed(0)}% (${smallRps.toFixed(0)} vs ${baseRps.toFixed(0)} req/s; p50 ${mean('agent, small snapshot', 'p50').toFixed(1)} ms, p99 ${mean('agent, small snapshot', 'p99').toFixed(1)} ms)`,
        met: smallRps >= THROUGHPUT_RATIO_TARGET * baseRps,
      });
      targets.push({
        name: 'decisions/s, large vs small snapshot',
        target: `≥ ${UNCHANGED_RATIO * 100}% (unchanged)`,
        measured: `${((largeRps / smallRps) * 100).toFixed(0)}% (${largeRps.toFixed(0)} vs ${smallRps.toFixed(0)} req/s)`,
        met: largeRps >= UNCHANGED_RATIO * smallRps,
      });
    }
    targets.push({
      name: 'agent RSS with the large snapshot',
      target: `< ${RSS_TARGET_MB} MB`,
      measured: `${rssAfterLoad.rss} MB after load, ${rssAfterRun.rss} MB after load runs (peak ${rssAfterRun.hwm} MB)`,
      met: Math.max(rssAfterLoad.rss, rssAfterRun.rss) < RSS_TARGET_MB,
    });
    targets.push({
      name: 'large snapshot load (fetch+parse+compile)',
      target: `< ${LOAD_TARGET_MS} ms`,
      measured: `${loadMs.toFixed(0)} ms (${largeLoad.fetchMs} + ${largeLoad.parseMs} + ${largeLoad.compileMs})`,
      met: loadMs < LOAD_TARGET_MS,
    });

    // (c) propagation with default settings, small then large snapshot.
    if (want('propagation')) {
      loads.push(await quiet('propagation', o));
      const p1 = await propagation(s1.url, a1.url, changes, o.log);
      const p2 = await propagation(s2.url, a2.url, Math.max(4, changes / 2), o.log);
      data.propagation = { small: p1, large: p2 };
      tables.push({
        title: 'change propagation: management write → first agent decision reflecting it (AGENT_POLL_MS default 1000)',
        columns: ['snapshot', 'changes', 'p50 ms', 'p90 ms', 'max ms', 'min ms', 'write p50 ms'],
        rows: [
          [
            'small',
            p1.propagation.n,
            ms(p1.propagation.p50, 0),
            ms(p1.propagation.p90, 0),
            ms(p1.propagation.max, 0),
            ms(p1.propagation.min, 0),
            ms(p1.write.p50, 1),
          ],
          [
            'large',
            p2.propagation.n,
            ms(p2.propagation.p50, 0),
            ms(p2.propagation.p90, 0),
            ms(p2.propagation.max, 0),
            ms(p2.propagation.min, 0),
            ms(p2.write.p50, 1),
          ],
        ],
        notes: ['a grant of the probe plan is created, then removed, alternately; each after a random 0.2–1.2 s pause'],
      });
      targets.push({
        name: 'propagation p50 (default poll)',
        target: `< ${PROPAGATION_TARGET_MS} ms`,
        measured: `${p1.propagation.p50.toFixed(0)} ms small, ${p2.propagation.p50.toFixed(0)} ms large`,
        met: p1.propagation.p50 < PROPAGATION_TARGET_MS && p2.propagation.p50 < PROPAGATION_TARGET_MS,
      });
    }
    data.loadChecks = loads;
    tables.push({
      title: 'machine load before each measured block (1-minute average; rule: ≤ 1.2, else wait 30 s, up to 10 min)',
      columns: ['block', 'load1', 'waited s', 'quiet'],
      rows: loads.map((l) => [l.before, l.load1, l.waitedS, l.quiet ? 'yes' : 'NO']),
    });
    return { area: 'agent', store: o.store, tables, data, targets };
  } finally {
    for (const p of procs.reverse()) await stopProc(p).catch(() => {});
    for (const d of agentDirs) rmSync(d, { recursive: true, force: true });
    for (const d of dbs) await d.destroy().catch(() => {});
  }
}
