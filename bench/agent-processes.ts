import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_ENCRYPTION_KEY, BENCH_VENDOR, freePort, REPO_ROOT, type BenchDb } from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// Processes: every child is killed when this process exits, however it exits.

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export interface Proc {
  proc: ChildProcess;
  output: () => string;
  lines: () => string[];
}

function spawnNode(args: string[], env: Record<string, string>): Proc {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  proc.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  return { proc, output: () => out, lines: () => out.split('\n') };
}

export async function stopProc(p: Proc): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.proc.once('exit', () => r()));
  p.proc.kill('SIGTERM');
  const t = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  p?: Proc,
  everyMs = 5,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p && p.proc.exitCode !== null)
      throw new Error(`${what}: the process exited with ${p.proc.exitCode}\n${p.output().slice(-3000)}`);
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${p ? `\n${p.output().slice(-3000)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const statusOf = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;

export async function startServer(bdb: BenchDb): Promise<{ p: Proc; url: string }> {
  const port = await freePort();
  const p = spawnNode(['--import', 'tsx', 'src/server.ts'], {
    PORT: String(port),
    DATA_DIR: bdb.dataDir,
    ...(bdb.databaseUrl ? { DATABASE_URL: bdb.databaseUrl } : {}),
    GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    GATEHOUSE_CLIENT_ID: BENCH_VENDOR.clientId,
    GATEHOUSE_API_KEY: BENCH_VENDOR.secret,
    PUBLIC_URL: 'http://gatehouse.bench',
    LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'server healthy',
    async () => ((await statusOf(`${url}/health`)) === 200 ? true : undefined),
    120_000,
    p,
    50,
  );
  return { p, url };
}

interface Agent {
  p: Proc;
  url: string;
  dir: string;
  spawnToReadyMs: number;
}

/** An agent with default settings (AGENT_POLL_MS unset: 1000 ms), a fresh data dir; ready = /health?bundles 200. */
export async function startAgent(serverUrl: string, wantOffset: number): Promise<Agent> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-agent-'));
  const started = performance.now();
  // BENCH_AGENT_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) passes extra node flags to the agent.
  const extra = (process.env.BENCH_AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const p = spawnNode([...extra, '--import', 'tsx', 'src/agent.ts'], {
    AGENT_PORT: String(port),
    AGENT_SERVER_URL: serverUrl,
    AGENT_DATA_DIR: dir,
    DATA_DIR: dir,
    GATEHOUSE_CLIENT_ID: BENCH_VENDOR.clientId,
    GATEHOUSE_API_KEY: BENCH_VENDOR.secret,
    LOG_LEVEL: 'info',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'agent loaded the snapshot',
    async () => {
      const r = await fetch(`${url}/health?bundles`, { signal: AbortSignal.timeout(5000) });
      return r.status === 200 && ((await r.json()) as { snapshotOffset: number }).snapshotOffset === wantOffset
        ? true
        : undefined;
    },
    60_000,
    p,
  );
  return { p, url, dir, spawnToReadyMs: performance.now() - started };
}

/** The agent's own account of its last snapshot load (sync.ts logs fetch/parse/store/compile ms). */
export function loadLog(a: Agent): Record<string, number> | undefined {
  const line = a.p
    .lines()
    .reverse()
    .find((l) => l.includes('entitlements snapshot loaded'));
  return line ? (JSON.parse(line) as Record<string, number>) : undefined;
}

export function rssMb(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rss: Number((kb('VmRSS') / 1024).toFixed(1)), hwm: Number((kb('VmHWM') / 1024).toFixed(1)) };
}

// A trivial Fastify JSON route in its own process: parses the same JSON bodies, answers a small JSON object.
const BASELINE = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/*', async () => ({ result: { result: true } }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

export async function startBaseline(): Promise<{ p: Proc; url: string }> {
  const port = await freePort();
  const p = spawnNode(['--input-type=module', '-e', BASELINE], { PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'baseline listening',
    async () =>
      (await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status === 200
        ? true
        : undefined,
    30_000,
    p,
  );
  return { p, url };
}
