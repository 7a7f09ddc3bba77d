import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { CallOptions, Reply } from './harness.ts';
import {
  cleanUpProcesses,
  freePort,
  freshDatabase,
  type Running,
  spawnProcess,
  startServer,
  stop,
  tempDir,
  waitFor,
} from './processes.ts';

/**
 * Several real `src/server.ts` processes on one PostgreSQL database behind HAProxy, as an operator runs them: same
 * DATABASE_URL, GATEHOUSE_ENCRYPTION_KEY, operator credentials and PUBLIC_URL; the balancer checks /ready.
 */

/** Why the fleet tests cannot run, or undefined when they can. */
export const fleetUnavailable = process.env.TEST_DATABASE_URL
  ? undefined
  : 'a fleet needs PostgreSQL (TEST_DATABASE_URL): PGlite is one process by design (src/storage/data-dir-lock.ts)';

/** A start (TypeScript compiled on the fly, migrations) on a busy 2-CPU runner can take most of a minute. */
const START_MS = 150_000;

export const FLEET_VENDOR = { clientId: 'fleet-operator', secret: 'fleet-operator-secret-0123456789' };

/** What the tests call: the builders' shape (`call`, `vendorToken`) over real HTTP. */
export interface Api {
  base: string;
  call<T = any>(method: string, path: string, o?: CallOptions): Promise<Reply<T>>;
  vendorToken(): Promise<string>;
}

/** An HTTP client of `base`; `remoteAddress` travels as X-Forwarded-For (the instances trust loopback proxies). */
export function api(base: string): Api {
  let vendor: string | undefined;
  const self: Api = {
    base,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.remoteAddress) headers['x-forwarded-for'] = o.remoteAddress;
      let payload: string | undefined = o.raw;
      if (payload === undefined && o.body !== undefined) {
        payload = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(base + path, { method, headers, body: payload });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: body as any, headers: Object.fromEntries(res.headers) };
    },
    async vendorToken() {
      if (!vendor) {
        const r = await self.call('POST', '/auth/vendor', { body: FLEET_VENDOR });
        if (r.status !== 200) throw new Error(`vendor auth at ${base}: ${r.status} ${JSON.stringify(r.body)}`);
        vendor = r.body.token as string;
      }
      return vendor;
    },
  };
  return self;
}

export interface Fleet {
  /** The balancer's base URL, and a client of it. */
  url: string;
  lb: Api;
  /** Each instance's base URL, and a client of each. */
  urls: string[];
  instances: Api[];
  /** The shared database (for checks the API does not expose). */
  db: pg.Pool;
  /** Signals instance `i` (SIGKILL when left out) and waits for it to exit; answers its exit code. */
  kill(i: number, signal?: NodeJS.Signals): Promise<number | null>;
  /**
   * Starts instance `i` again on its port (killed first if still running); resolves once the balancer routes to it.
   * Answers the milliseconds taken.
   */
  restart(i: number): Promise<number>;
  /** HAProxy's view of each server: UP, DOWN, ... (its stats socket). */
  states(): Promise<string[]>;
  output(i: number): string;
  close(): Promise<void>;
}

/** The HAProxy configuration the fleet runs (and docs/operations.md shows): round robin, /ready checks, redispatch. */
export function haproxyConfig(o: { port: number; socket: string; servers: number[] }): string {
  return [
    'global',
    `  stats socket ${o.socket} mode 600 level admin`,
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    // A refused connection is retried; with redispatch the retry goes to another server.
    '  retries 3',
    '  option redispatch 1',
    '  option forwardfor',
    'frontend gatehouse',
    `  bind 127.0.0.1:${o.port}`,
    '  default_backend gatehouse',
    'backend gatehouse',
    '  balance roundrobin',
    '  option httpchk GET /ready',
    '  http-check expect status 200',
    // A dead instance refuses connections and fails two checks in 400 ms; one slow answer (a busy event loop, a
    // neighbour restarting) must not take a healthy instance out, so a check may take up to 1 s.
    '  timeout check 1s',
    '  default-server inter 200ms fall 2 rise 1',
    ...o.servers.map((p, i) => `  server g${i} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(socket, () => s.end(`${command}\n`));
    s.on('data', (d) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

/** N instances (2 when left out) and HAProxy, returned once the balancer sees every instance UP. */
export async function startFleet(opts: { size?: number; env?: Record<string, string> } = {}): Promise<Fleet> {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
  } catch {
    throw new Error('haproxy is not installed (apt-get install haproxy; .ci/run installs it)');
  }
  const size = opts.size ?? 2;
  const { DATABASE_URL } = await freshDatabase();
  const shared = {
    DATABASE_URL,
    GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
    GATEHOUSE_CLIENT_ID: FLEET_VENDOR.clientId,
    GATEHOUSE_API_KEY: FLEET_VENDOR.secret,
    PUBLIC_URL: 'http://gatehouse.fleet.test',
    TRUST_PROXY: 'loopback',
    ...opts.env,
  };
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const envOf = (i: number) => ({ ...shared, DATA_DIR: tempDir(mkdtempSync(join(tmpdir(), `gatehouse-fleet-${i}-`))) });
  const envs = ports.map((_, i) => envOf(i));
  // Started together, as a rolling deploy or an autoscaler would: migrations and bootstrap race on one database.
  const running: Running[] = await Promise.all(
    ports.map((p, i) => startServer(envs[i], { port: p, timeoutMs: START_MS })),
  );

  const dir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-haproxy-')));
  const socket = join(dir, 'admin.sock');
  const port = await freePort();
  writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig({ port, socket, servers: ports }));
  const haproxy = spawnProcess('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], {});

  async function states(): Promise<string[]> {
    const csv = await haproxyCommand(socket, 'show stat');
    const rows = csv.split('\n').map((l) => l.split(','));
    return ports.map((_, i) => rows.find((r) => r[0] === 'gatehouse' && r[1] === `g${i}`)?.[17] ?? 'unknown');
  }
  const describe = () => `haproxy:\n${haproxy.output()}\n${running.map((r) => r.stdout()).join('\n')}`;
  const up = (i: number) => async () => {
    if (haproxy.proc.exitCode !== null) throw new Error(`haproxy exited:\n${haproxy.output()}`);
    return (await states())[i] === 'UP';
  };
  for (let i = 0; i < size; i++) await waitFor(up(i), 10_000, describe);

  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  db.on('error', () => {});
  const url = `http://127.0.0.1:${port}`;
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  return {
    url,
    lb: api(url),
    urls,
    instances: urls.map((u) => api(u)),
    db,
    kill: (i, signal = 'SIGKILL') => stop(running[i].proc, signal),
    async restart(i) {
      const t0 = Date.now();
      await stop(running[i].proc, 'SIGKILL');
      running[i] = await startServer(envs[i], { port: ports[i], timeoutMs: START_MS });
      await waitFor(up(i), 10_000, describe);
      return Date.now() - t0;
    },
    states,
    output: (i) => running[i].stdout(),
    async close() {
      await db.end();
      await cleanUpProcesses();
    },
  };
}
