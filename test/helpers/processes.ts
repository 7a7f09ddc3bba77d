import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';

/** Real `src/server.ts` / `src/start.ts` processes for the runtime-contract tests, and what they leave behind. */

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface Running {
  proc: ChildProcess;
  port: number;
  stdout: () => string;
  url: (path: string) => string;
}

const started: ChildProcess[] = [];
const dirs: string[] = [];
const databases: string[] = [];

/** Spawns `command` with PATH/HOME and `env` only; output is collected; `cleanUpProcesses` kills it if still running. */
export function spawnProcess(command: string, args: string[], env: Record<string, string>) {
  let out = '';
  const proc = spawn(command, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: the clean-up kills what it started too (npm start's server and agent), whose open
    // output pipes would otherwise keep the test file from ever ending.
    detached: true,
  });
  started.push(proc);
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  return { proc, output: () => out };
}

/** Spawns `entry` (src/server.ts or src/start.ts) with PATH/HOME and `env`; output is collected. */
export function spawnEntry(entry: string, env: Record<string, string>) {
  return spawnProcess(process.execPath, ['--import', 'tsx', entry], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
}

/** Polls `probe` every 100 ms until it is true; throws with `describe()` after `ms`. */
export async function waitFor(probe: () => Promise<boolean>, ms: number, describe: () => string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await probe().catch(() => false)) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms:\n${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const answers = (url: string, status = 200) =>
  fetch(url).then(
    (r) => r.status === status,
    () => false,
  );

/** A server process on `port` (a free one when left out), returned once /health answers (within `timeoutMs`). */
export async function startServer(
  env: Record<string, string>,
  opts: { port?: number; timeoutMs?: number } = {},
): Promise<Running> {
  const port = opts.port ?? (await freePort());
  const { proc, output } = spawnEntry('src/server.ts', { PORT: String(port), ...env });
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}):\n${output()}`);
      return answers(url('/health'));
    },
    opts.timeoutMs ?? 120_000,
    output,
  );
  return { proc, port, stdout: output, url };
}

export async function stop(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  // A process ended by a signal has no exit code, only its signalCode: it is gone all the same.
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  proc.kill(signal);
  return exited;
}

export function tempDir(path: string): string {
  dirs.push(path);
  return path;
}

/** In PostgreSQL mode, a database of its own for each server under test (none with PGlite). */
export async function freshDatabase(): Promise<Record<string, string>> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return {};
  const name = `gh_server_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  databases.push(name);
  const u = new URL(base);
  u.pathname = `/${name}`;
  return { DATABASE_URL: u.toString() };
}

/** For an `after` hook: no process left running (the test process would wait on it), no directory, no database. */
export async function cleanUpProcesses(): Promise<void> {
  for (const p of started) {
    try {
      if (p.pid) process.kill(-p.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    p.stdout?.destroy();
    p.stderr?.destroy();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (databases.length && process.env.TEST_DATABASE_URL) {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    for (const name of databases.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  }
}
