import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { ms, REPO_ROOT, type Table } from './lib.ts';

/** CPU profiles of the benchmark process's main thread (node:inspector), summarised by where the code lives. */

export interface ProfileSummary {
  totalMs: number;
  /** Main-thread time not idle. */
  busyMs: number;
  byArea: { area: string; ms: number; pct: number }[];
  topFunctions: { fn: string; ms: number; pct: number }[];
}

function areaOf(fn: string, url: string): string {
  if (fn === '(idle)') return 'idle (waiting for the database server, the thread pool or the network)';
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.startsWith('wasm://')) return '@electric-sql/pglite (PostgreSQL in WASM)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([a-z_]+)/.exec(url);
    const seg = (m?.[1] ?? 'core').replace(/^_/, '').replace(/_.*$/, '');
    return `node:${seg}`;
  }
  if (url.includes(`${REPO_ROOT}/src/`) || url.includes('/src/')) return 'gatehouse src/';
  if (url.includes('/bench/')) return 'bench harness';
  if (!url) return `native: ${fn || '(anonymous)'}`;
  return url;
}

export async function cpuProfile<T>(fn: () => Promise<T>): Promise<{ result: T; profile: ProfileSummary }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  let result: T;
  let profile: any;
  try {
    result = await fn();
  } finally {
    profile = (await session.post('Profiler.stop')).profile;
    await session.post('Profiler.disable');
    session.disconnect();
  }
  // BENCH_CPUPROFILE_DIR: also keep the raw profile (open in DevTools, or summarise with a script).
  if (process.env.BENCH_CPUPROFILE_DIR)
    writeFileSync(`${process.env.BENCH_CPUPROFILE_DIR}/bench-${Date.now()}.cpuprofile`, JSON.stringify(profile));
  const nodes = new Map<number, { callFrame: { functionName: string; url: string; lineNumber: number } }>();
  for (const n of profile.nodes) nodes.set(n.id, n);
  const selfUs = new Map<number, number>();
  const samples: number[] = profile.samples ?? [];
  const deltas: number[] = profile.timeDeltas ?? [];
  // As DevTools does: sample i stands for the time until the next sample.
  for (let i = 0; i < samples.length - 1; i++)
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + (deltas[i + 1] ?? 0));
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const cf = nodes.get(id)!.callFrame;
    total += us;
    const area = areaOf(cf.functionName, cf.url);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const short = cf.url
      .replace(/^.*\/node_modules\//, '')
      .replace(`file://${REPO_ROOT}/`, '')
      .replace(/^wasm:\/\/wasm\//, 'wasm:');
    const key = `${cf.functionName || '(anonymous)'}${short ? ` ${short}:${cf.lineNumber + 1}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const pct = (us: number) => Number(((us / (total || 1)) * 100).toFixed(1));
  const idle = [...byArea.entries()].filter(([a]) => a.startsWith('idle')).reduce((a, [, us]) => a + us, 0);
  return {
    result: result!,
    profile: {
      totalMs: total / 1000,
      busyMs: (total - idle) / 1000,
      byArea: [...byArea.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([area, us]) => ({ area, ms: us / 1000, pct: pct(us) })),
      topFunctions: [...byFn.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([f, us]) => ({ fn: f, ms: us / 1000, pct: pct(us) })),
    },
  };
}

export function profileTable(title: string, p: ProfileSummary, ops: number, notes: string[] = []): Table {
  return {
    title,
    columns: ['where (main thread, self time)', '% of samples', 'ms per operation'],
    rows: p.byArea.filter((a) => a.pct >= 0.5).map((a) => [a.area, a.pct, ms(a.ms / (ops || 1), 3)]),
    notes: [
      `Main thread busy ${((p.busyMs / (p.totalMs || 1)) * 100).toFixed(0)} % of ${(p.totalMs / 1000).toFixed(1)} s over ${ops} operations: ${(p.busyMs / (ops || 1)).toFixed(2)} ms of main-thread CPU per operation.`,
      ...notes,
      `Top functions: ${p.topFunctions
        .slice(0, 6)
        .map((f) => `${f.fn} ${f.pct}%`)
        .join('; ')}.`,
    ],
  };
}
