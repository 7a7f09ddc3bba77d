import http from 'node:http';
import type { LoadOp } from './loadgen.ts';

/**
 * The load generator's process (see bench/loadgen.ts): closed-loop HTTP workers, each with one keep-alive connection,
 * driven over IPC by the benchmark process, which runs the app. Kept free of application imports so it starts fast
 * and its own CPU is small and separate from the server's.
 *
 * Messages in: {type: 'run', id, baseUrl, warmupMs, durationMs, ops: LoadOp[]} (one op per worker).
 * Messages out: {type: 'window-start', id} and {type: 'window-end', id} at the measured window's edges (the parent
 * reads its CPU counters there), then {type: 'done', id, latencies, ops, errors, cpuMs}: the ops with their chained
 * bodies as they stand, so the next run continues the chains, and how many workers ran out of one-use bodies.
 */

interface RunMessage {
  type: 'run';
  id: number;
  baseUrl: string;
  warmupMs: number;
  durationMs: number;
  ops: LoadOp[];
}

function request(agent: http.Agent, url: URL, op: LoadOp): Promise<{ status: number; body: string }> {
  const raw = op.bodies?.shift();
  const json = op.body === undefined ? undefined : Buffer.from(JSON.stringify(op.body));
  const payload = raw === undefined ? json : Buffer.from(raw);
  const headers: Record<string, string | number> = { accept: 'application/json', ...(op.headers ?? {}) };
  if (payload) {
    if (raw === undefined) headers['content-type'] = 'application/json';
    headers['content-length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: op.method, path: op.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

const agents = new Map<string, http.Agent[]>();

async function run(m: RunMessage) {
  const url = new URL(m.baseUrl);
  // One keep-alive connection per worker, kept across runs against the same server.
  let pool = agents.get(m.baseUrl) ?? [];
  while (pool.length < m.ops.length) pool.push(new http.Agent({ keepAlive: true, maxSockets: 1 }));
  agents.set(m.baseUrl, pool);
  const begin = performance.now();
  const start = begin + m.warmupMs;
  const end = start + m.durationMs;
  const latencies: number[] = [];
  let errors = 0;
  let exhausted = 0;
  let firstError: string | undefined;
  let cpuStart: NodeJS.CpuUsage | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  const marks = [
    setTimeout(() => {
      cpuStart = process.cpuUsage();
      process.send!({ type: 'window-start', id: m.id });
    }, m.warmupMs),
    setTimeout(() => {
      cpu = process.cpuUsage(cpuStart);
      process.send!({ type: 'window-end', id: m.id });
    }, m.warmupMs + m.durationMs),
  ];
  await Promise.all(
    m.ops.map(async (op, w) => {
      while (performance.now() < end && errors === 0) {
        if (op.bodies && op.bodies.length === 0) {
          exhausted++;
          break;
        }
        const s = performance.now();
        const r = await request(pool[w], url, op).catch((err: Error) => ({ status: 0, body: String(err) }));
        const e = performance.now();
        if (r.status !== op.expect) {
          errors++;
          firstError ??= `${op.method} ${op.path}: HTTP ${r.status} ${r.body.slice(0, 300)}`;
          break;
        }
        if (op.chain) op.body = { ...op.body, [op.chain.to]: JSON.parse(r.body)[op.chain.from] };
        if (e >= start && e <= end) latencies.push(e - s);
      }
    }),
  );
  for (const t of marks) clearTimeout(t);
  // A run stopped by an error still closes its window, so the parent is not left waiting.
  if (!cpu) process.send!({ type: 'window-end', id: m.id });
  const cpuMs = cpu ? (cpu.user + cpu.system) / 1000 : NaN;
  process.send!({ type: 'done', id: m.id, latencies, ops: m.ops, errors, firstError, cpuMs, exhausted });
}

process.on('message', (m: RunMessage | { type: 'close' }) => {
  if (m.type === 'close') {
    for (const pool of agents.values()) for (const a of pool) a.destroy();
    process.disconnect();
    return;
  }
  void run(m);
});
process.send!({ type: 'ready' });
