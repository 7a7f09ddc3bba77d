import { readdirSync, readFileSync } from 'node:fs';
import { stats } from './lib.ts';
import type { LoadResult } from './loadgen.ts';

// ---------------------------------------------------------------------------------------------------------------
// Load generation and CPU placement

/** A closed loop's result: LoadResult's figures without the load generator's (these loops run in this process). */
export type LoopResult = Pick<
  LoadResult,
  'workers' | 'ops' | 'seconds' | 'perSecond' | 'latency' | 'cpuMsPerOp' | 'mainCpuMsPerOp' | 'otherCpuMsPerOp'
>;

/**
 * CPU time (user + system, ms) of the main thread and of all other threads of this process, from /proc/self/task
 * (Linux; undefined elsewhere). Clock ticks of 10 ms: meaningful over windows of a second or more.
 */
function threadCpuMs(): { main: number; other: number } | undefined {
  try {
    let main = 0;
    let other = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      const st = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const t = (Number(f[11]) + Number(f[12])) * 10;
      if (tid === String(process.pid)) main += t;
      else other += t;
    }
    return { main, other };
  } catch {
    return undefined;
  }
}

/**
 * `workers` closed loops calling `op` back to back for `warmupMs + durationMs`; counts the operations that complete
 * inside the measured window (after the warm-up), so the figure is a steady-state rate.
 */
export async function closedLoop(
  workers: number,
  warmupMs: number,
  durationMs: number,
  op: (worker: number) => Promise<void>,
): Promise<LoopResult> {
  const start = performance.now() + warmupMs;
  const end = start + durationMs;
  const latencies: number[] = [];
  let cpuStart: NodeJS.CpuUsage | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  let threadsStart: ReturnType<typeof threadCpuMs>;
  let threadsEnd: ReturnType<typeof threadCpuMs>;
  const marks = [
    setTimeout(
      () => ((cpuStart = process.cpuUsage()), (threadsStart = threadCpuMs())),
      Math.max(0, start - performance.now()),
    ),
    setTimeout(
      () => ((cpu = process.cpuUsage(cpuStart)), (threadsEnd = threadCpuMs())),
      Math.max(0, end - performance.now()),
    ),
  ];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < end) {
        const s = performance.now();
        await op(w);
        const e = performance.now();
        if (e >= start && e <= end) latencies.push(e - s);
      }
    }),
  );
  for (const m of marks) clearTimeout(m);
  const seconds = durationMs / 1000;
  const cpuMs = cpu ? (cpu.user + cpu.system) / 1000 : NaN;
  const n = latencies.length || 1;
  return {
    workers,
    ops: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    latency: stats(latencies),
    cpuMsPerOp: cpuMs / n,
    mainCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.main - threadsStart.main) / n : NaN,
    otherCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.other - threadsStart.other) / n : NaN,
  };
}
