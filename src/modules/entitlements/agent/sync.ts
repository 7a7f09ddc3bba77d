import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { compile, type Engine, type Snapshot } from '../engine/index.ts';

export interface SyncOptions {
  serverUrl: string;
  clientId?: string;
  apiKey?: string;
  /** Where a local server leaves the agent's credentials when none are configured (read at each sign-in). */
  credentialsFile?: string;
  pollMs: number;
  snapshotFile: string;
  log: Logger;
}

/**
 * The agent's data: the last good snapshot, compiled. Loads the stored copy at start (so the agent answers while the
 * server is unreachable), then polls the server's offset and pulls a snapshot whenever the offset changed. A new
 * snapshot is written to disk atomically (temporary file + rename) before it replaces the live one.
 */
export function createSnapshotSync(o: SyncOptions) {
  let current: { offset: number; engine: Engine } | undefined;
  let token: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastError = '';

  /** Compiles and swaps in a snapshot; the log line carries the phase timings (ms) the benchmark reads. */
  function install(s: Snapshot, source: string, timings: Record<string, number>) {
    const t0 = performance.now();
    const engine = compile(s.data);
    const compileMs = performance.now() - t0;
    current = { offset: s.snapshotOffset, engine };
    const ms = Object.fromEntries(
      Object.entries({ ...timings, compileMs }).map(([k, v]) => [k, Math.round(v * 100) / 100]),
    );
    o.log.info({ offset: s.snapshotOffset, source, ...current.engine.stats(), ...ms }, 'entitlements snapshot loaded');
  }

  function loadStored(): void {
    try {
      const t0 = performance.now();
      const raw = readFileSync(o.snapshotFile, 'utf8');
      const t1 = performance.now();
      const s = JSON.parse(raw) as Snapshot;
      if (typeof s?.snapshotOffset === 'number' && s.data)
        install(s, 'disk', { readMs: t1 - t0, parseMs: performance.now() - t1, bytes: raw.length });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        o.log.warn({ err: String(err) }, 'stored snapshot unreadable; waiting for the server');
    }
  }

  function store(raw: string): void {
    mkdirSync(dirname(o.snapshotFile), { recursive: true });
    const tmp = `${o.snapshotFile}.${process.pid}.tmp`;
    writeFileSync(tmp, raw);
    renameSync(tmp, o.snapshotFile);
  }

  /** Configured credentials, else the ones a local server left in `credentialsFile`. */
  function credentials(): { clientId: string; secret: string } | undefined {
    if (o.clientId && o.apiKey) return { clientId: o.clientId, secret: o.apiKey };
    if (!o.credentialsFile) return undefined;
    try {
      const c = JSON.parse(readFileSync(o.credentialsFile, 'utf8')) as { clientId?: unknown; secret?: unknown };
      return typeof c.clientId === 'string' && typeof c.secret === 'string'
        ? { clientId: c.clientId, secret: c.secret }
        : undefined;
    } catch {
      return undefined;
    }
  }

  async function get(path: string): Promise<Response> {
    if (!token) {
      const creds = credentials();
      if (!creds)
        throw new Error(
          'no credentials: set AGENT_CLIENT_ID/AGENT_API_KEY (or GATEHOUSE_CLIENT_ID/GATEHOUSE_API_KEY), or start the server with the same DATA_DIR',
        );
      const r = await fetch(`${o.serverUrl}/auth/vendor`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(creds),
        signal: AbortSignal.timeout(10_000),
      });
      if (r.status !== 200) throw new Error(`POST /auth/vendor answered ${r.status}`);
      token = ((await r.json()) as { token: string }).token;
    }
    const r = await fetch(`${o.serverUrl}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
    if (r.status === 401) token = undefined;
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`);
    return r;
  }

  /** One poll: the offset, then the snapshot when it moved. Errors keep the current snapshot. */
  async function poll(): Promise<void> {
    try {
      const { snapshotOffset } = (await (
        await get('/entitlements/api/v1/vendor-entitlements-snapshot-offset')
      ).json()) as { snapshotOffset: number };
      if (current && current.offset === snapshotOffset) return;
      const t0 = performance.now();
      const raw = await (await get('/entitlements/api/v1/vendor-entitlements')).text();
      const t1 = performance.now();
      const s = JSON.parse(raw) as Snapshot;
      const t2 = performance.now();
      store(raw);
      install(s, 'server', { fetchMs: t1 - t0, parseMs: t2 - t1, storeMs: performance.now() - t2, bytes: raw.length });
      lastError = '';
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      if (msg !== lastError)
        o.log.warn({ err: msg }, 'entitlements snapshot poll failed; answering from the last good snapshot');
      lastError = msg;
    }
  }

  return {
    get engine(): Engine | undefined {
      return current?.engine;
    },
    get offset(): number | undefined {
      return current?.offset;
    },
    async start(): Promise<void> {
      loadStored();
      const loop = async () => {
        await poll();
        if (!stopped) timer = setTimeout(loop, o.pollMs);
      };
      await loop();
    },
    stop(): void {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
    poll,
  };
}
