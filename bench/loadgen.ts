import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { LOG_REDACT } from '../src/lib/log.ts';
import { REPO_ROOT, stats, type Stats } from './lib.ts';

/**
 * A load generator in its own process (bench/loadgen-child.ts), as autocannon or wrk would be: the benchmark process
 * runs the app, pinned to one CPU while a window is measured, and the HTTP clients run elsewhere (pinned to the other
 * CPU), so "requests per second on one core" charges the server's core with the server's work only. The child's own
 * CPU is measured too (client CPU per request), and so, when given, is the CPU of other processes (the PostgreSQL
 * backends serving the app).
 */

export interface LoadOp {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
  expect: number;
  /** After each answer, `body[chain.to] = answer[chain.from]` (a rotating refresh token). */
  chain?: { from: string; to: string };
  /**
   * One-use raw bodies (sent as they are, content type from `headers`), one per request in place of `body`: an
   * authorization code, say. A worker whose list runs out stops (counted in the result's `exhausted`).
   */
  bodies?: string[];
}

export interface LoadResult {
  workers: number;
  ops: number;
  seconds: number;
  perSecond: number;
  latency: Stats;
  /** CPU time of the server process (all threads: main, thread pool, PGlite) per request in the window. */
  cpuMsPerOp: number;
  /** Of which the main thread and the other threads (Linux /proc; NaN elsewhere). */
  mainCpuMsPerOp: number;
  otherCpuMsPerOp: number;
  /** The server process's CPU time over the window's wall time (1 = one CPU saturated). */
  serverCpuShare: number;
  /** The load generator's CPU per request (its own process). */
  clientCpuMsPerOp: number;
  /** CPU of the watched processes (e.g. PostgreSQL backends) per request; NaN when none. */
  watchedCpuMsPerOp: number;
  /** Where the server ran ('0' when pinned) and the load generator. */
  serverCpus: string;
  clientCpus: string;
  /** Workers that ran out of one-use bodies before the window ended (their figure then undercounts). */
  exhausted: number;
}

/** CPU time (user + system, ms) of this process's main thread and of its other threads, from /proc (Linux). */
export function threadCpuMs(): { main: number; other: number } | undefined {
  try {
    let main = 0;
    let other = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      const t = procTicksMs(`/proc/self/task/${tid}/stat`);
      if (tid === String(process.pid)) main += t;
      else other += t;
    }
    return { main, other };
  } catch {
    return undefined;
  }
}

function procTicksMs(file: string): number {
  const st = readFileSync(file, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU ms of whole processes (all their threads), summed; processes that went away count 0. */
function pidsCpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += procTicksMs(join('/proc', String(pid), 'stat'));
    } catch {
      /* gone */
    }
  }
  return total;
}

/**
 * The CPU of a whole PostgreSQL server on this machine, found from one of its backends (its parent is the postmaster):
 * `cpuMs()` answers the postmaster's own time, the time of its children that exited (reaped: the postmaster's cutime
 * and cstime) and of those alive (backends, autovacuum, WAL writer, checkpointer). Unlike summing the backends seen
 * at the start, it keeps the CPU of connections the pool closes and opens during a window. NaN without /proc.
 */
export function postgresServer(backendPid: number): { cpuMs(): number } {
  const fields = (pid: number | string) => {
    const st = readFileSync(join('/proc', String(pid), 'stat'), 'utf8');
    return st.slice(st.lastIndexOf(')') + 2).split(' ');
  };
  let postmaster = NaN;
  try {
    postmaster = Number(fields(backendPid)[1]);
  } catch {
    /* no /proc */
  }
  return {
    cpuMs() {
      try {
        const pm = fields(postmaster);
        let total = (Number(pm[11]) + Number(pm[12]) + Number(pm[13]) + Number(pm[14])) * 10;
        for (const entry of readdirSync('/proc')) {
          if (!/^\d+$/.test(entry)) continue;
          try {
            const f = fields(entry);
            if (Number(f[1]) === postmaster) total += (Number(f[11]) + Number(f[12])) * 10;
          } catch {
            /* exited meanwhile */
          }
        }
        return total;
      } catch {
        return NaN;
      }
    },
  };
}

/** Pins every thread of a process to `cpus`; answers the previous list, or undefined when taskset is unavailable. */
export function pin(pid: number, cpus: string): string | undefined {
  try {
    const previous = /list:\s*(\S+)/.exec(
      execFileSync('taskset', ['-p', '-c', String(pid)], { encoding: 'utf8' }),
    )?.[1];
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return previous ?? cpus;
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` with every thread of this process pinned to `cpus` (taskset -a), then restores the previous CPU list.
 * Without taskset it runs unpinned and says so.
 */
export async function onCpus<T>(cpus: string, fn: () => Promise<T>): Promise<{ result: T; pinned: boolean }> {
  const previous = pin(process.pid, cpus);
  if (previous === undefined) return { result: await fn(), pinned: false };
  try {
    return { result: await fn(), pinned: true };
  } finally {
    pin(process.pid, previous);
  }
}

export interface LoadGenerator {
  /** Whether the generator process is pinned (to `clientCpus`). */
  pinned: boolean;
  clientCpus: string;
  /**
   * Runs one closed-loop window: one worker per op, `warmupMs` unmeasured then `durationMs` measured. The server (this
   * process) is pinned to `serverCpus` for the whole run when given. `ops` is updated in place (chains continue).
   */
  run(spec: {
    baseUrl: string;
    warmupMs: number;
    durationMs: number;
    ops: LoadOp[];
    serverCpus?: string;
    watchPids?: number[];
  }): Promise<LoadResult>;
  close(): Promise<void>;
}

/** Starts the generator process (node with tsx, like the benchmark) and pins it to `clientCpus` (default '1'). */
export async function startLoadGenerator(opts: { clientCpus?: string } = {}): Promise<LoadGenerator> {
  const clientCpus = opts.clientCpus ?? '1';
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'bench', 'loadgen-child.ts')],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: { type: string }) => {
      if (m.type === 'ready') {
        child.off('message', onMessage);
        resolve();
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code} before it was ready`)));
  });
  const pinned = pin(child.pid!, clientCpus) !== undefined;
  let nextId = 1;
  return {
    pinned,
    clientCpus: pinned ? clientCpus : 'any',
    async run(spec) {
      const id = nextId++;
      const serverCpus = spec.serverCpus;
      const runIt = () =>
        new Promise<LoadResult>((resolve, reject) => {
          let cpuStart: NodeJS.CpuUsage | undefined;
          let cpu: NodeJS.CpuUsage | undefined;
          let threadsStart: ReturnType<typeof threadCpuMs>;
          let threadsEnd: ReturnType<typeof threadCpuMs>;
          let watchedStart = 0;
          let watchedEnd = NaN;
          let wallStart = 0;
          let wall = NaN;
          const onExit = (code: number | null) => reject(new Error(`load generator exited with ${code}`));
          const onMessage = (m: any) => {
            if (m.id !== id) return;
            if (m.type === 'window-start') {
              cpuStart = process.cpuUsage();
              threadsStart = threadCpuMs();
              if (spec.watchPids?.length) watchedStart = pidsCpuMs(spec.watchPids);
              wallStart = performance.now();
            } else if (m.type === 'window-end') {
              if (cpuStart) {
                cpu = process.cpuUsage(cpuStart);
                threadsEnd = threadCpuMs();
                if (spec.watchPids?.length) watchedEnd = pidsCpuMs(spec.watchPids) - watchedStart;
                wall = performance.now() - wallStart;
              }
            } else if (m.type === 'done') {
              child.off('message', onMessage);
              child.off('exit', onExit);
              if (m.errors) return reject(new Error(`load generator: ${m.firstError}`));
              spec.ops.splice(0, spec.ops.length, ...m.ops);
              const n = m.latencies.length || 1;
              const cpuMs = cpu ? (cpu.user + cpu.system) / 1000 : NaN;
              const seconds = spec.durationMs / 1000;
              resolve({
                workers: spec.ops.length,
                ops: m.latencies.length,
                seconds,
                perSecond: m.latencies.length / seconds,
                latency: stats(m.latencies),
                cpuMsPerOp: cpuMs / n,
                mainCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.main - threadsStart.main) / n : NaN,
                otherCpuMsPerOp: threadsStart && threadsEnd ? (threadsEnd.other - threadsStart.other) / n : NaN,
                serverCpuShare: cpuMs / wall,
                clientCpuMsPerOp: m.cpuMs / n,
                watchedCpuMsPerOp: watchedEnd / n,
                serverCpus: serverCpus ?? 'any',
                clientCpus: pinned ? clientCpus : 'any',
                exhausted: m.exhausted ?? 0,
              });
            }
          };
          child.on('message', onMessage);
          child.once('exit', onExit);
          child.send({
            type: 'run',
            id,
            baseUrl: spec.baseUrl,
            warmupMs: spec.warmupMs,
            durationMs: spec.durationMs,
            ops: spec.ops,
          });
        });
      if (!serverCpus) return runIt();
      const { result, pinned: serverPinned } = await onCpus(serverCpus, runIt);
      if (!serverPinned) result.serverCpus = 'any (taskset unavailable)';
      return result;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The server's logger as src/lib/log.ts builds it (level info, secrets redacted, pino's default synchronous
 * destination), writing to /dev/null instead of stdout: every request's two log lines are formatted and written as in
 * production. (startBenchApp's default writes asynchronously, which hands every line to libuv's thread pool: work
 * the server does not do.)
 */
export function productionLikeLogger() {
  return pino(
    { level: 'info', redact: { paths: LOG_REDACT, censor: '[redacted]' } },
    pino.destination({ dest: '/dev/null', sync: true }),
  );
}
