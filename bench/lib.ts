import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContext, LOG_REDACT, type Context } from '../src/context.ts';
import { buildApp } from '../src/routes.ts';
import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';
import { migrate } from '../src/storage/migrate.ts';
import { openPglite } from '../src/storage/pglite.ts';
import { openPostgres } from '../src/storage/postgres.ts';

/** Shared plumbing of the benchmarks: stores, the app over real HTTP, timing statistics and result tables. */

export type StoreKind = 'pglite' | 'postgres';

export const REPO_ROOT = resolve(import.meta.dirname, '..');
export const DEFAULT_BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const BENCH_VENDOR = { clientId: 'bench-client', secret: 'bench-api-key-0123456789abcdef' };
/** Fixed key-encryption key, so a server started later on the same data (cold start) can open the signing keys. */
export const BENCH_ENCRYPTION_KEY = 'bench-encryption-key-0123456789';

export interface BenchOptions {
  store: StoreKind;
  quick: boolean;
  /** EXPLAIN (ANALYZE, BUFFERS) the statements of each measured case into the JSON results. */
  explain: boolean;
  /** Sections to measure (undefined: all); an area documents its section names. */
  only?: string[];
  log: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------------------------
// Result shape

export interface Table {
  title: string;
  columns: string[];
  rows: (string | number | null)[][];
  notes?: string[];
}

export interface AreaResult {
  area: string;
  store: StoreKind;
  tables: Table[];
  /** Free-form structured data (raw samples summary, plans, settings) written to the JSON file. */
  data: Record<string, unknown>;
  targets: { name: string; target: string; measured: string; met: boolean }[];
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics

export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    min: s[0],
    max: s[s.length - 1],
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
  };
}

export const ms = (v: number, digits = 2) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);

// ---------------------------------------------------------------------------------------------------------------
// Stores

export interface BenchDb {
  db: ClosableDb;
  kind: StoreKind;
  /** PGlite: the DATA_DIR holding pgdata/ (the server's layout). */
  dataDir: string;
  /** PostgreSQL: a DATABASE_URL that reaches the same data (for a server process). */
  databaseUrl?: string;
  /** Closes the database (PGlite: flushes it to dataDir) without removing anything. */
  close(): Promise<void>;
  /** Closes if needed and removes the data: the temporary directory, the database or schema. */
  destroy(): Promise<void>;
}

const adminUrl = () => process.env.BENCH_DATABASE_URL || DEFAULT_BENCH_DATABASE_URL;

/** Databases not yet destroyed, so an interrupted run (Ctrl-C) can still drop them: see destroyAllBenchDbs. */
const live = new Set<BenchDb>();

export async function destroyAllBenchDbs(): Promise<void> {
  for (const b of [...live]) await b.destroy().catch(() => {});
}

function track(b: BenchDb): BenchDb {
  const destroy = b.destroy;
  b.destroy = async () => {
    live.delete(b);
    await destroy();
  };
  live.add(b);
  return b;
}

/**
 * A fresh, migrated database. PGlite: on disk in a temporary DATA_DIR (as the server opens it). PostgreSQL: a new
 * database on BENCH_DATABASE_URL's server, or a new schema when the role may not create databases; dropped by destroy().
 */
export async function openBenchDb(kind: StoreKind, label: string): Promise<BenchDb> {
  const dataDir = mkdtempSync(join(tmpdir(), `gatehouse-bench-${label}-`));
  if (kind === 'pglite') {
    const db = await openPglite({ dataDir: join(dataDir, 'pgdata') });
    await migrate(db);
    let closed = false;
    const close = async () => {
      if (!closed) await db.close();
      closed = true;
    };
    return track({
      db,
      kind,
      dataDir,
      close,
      async destroy() {
        try {
          await close();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    });
  }

  const base = adminUrl();
  const name = `gatehouse_bench_${label.replace(/[^a-z0-9]/g, '')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  let mode: 'database' | 'schema' = 'database';
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch {
    mode = 'schema';
  } finally {
    await admin.end();
  }
  let db: Awaited<ReturnType<typeof openPostgres>>;
  let databaseUrl: string;
  if (mode === 'database') {
    const u = new URL(base);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    db = await openPostgres({ url: databaseUrl });
  } else {
    db = await openPostgres({ url: base, schema: name });
    const u = new URL(base);
    u.searchParams.set('options', `-c search_path=${name}`);
    databaseUrl = u.toString();
  }
  await migrate(db);
  let closed = false;
  const close = async () => {
    if (!closed) await db.close();
    closed = true;
  };
  const withAdmin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return track({
    db,
    kind,
    dataDir,
    databaseUrl,
    close,
    async destroy() {
      try {
        await close().catch(() => {});
        await withAdmin(mode === 'database' ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)` : `DROP SCHEMA IF EXISTS ${name} CASCADE`);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Statement recorder (for --explain): captures the SQL an HTTP request issues through the Db.

export interface Recorded {
  sql: string;
  params: unknown[];
}

export function recordingDb(inner: ClosableDb): { db: ClosableDb; record: <T>(fn: () => Promise<T>) => Promise<{ result: T; statements: Recorded[] }> } {
  let sink: Recorded[] | undefined;
  const wrap = (q: Db): Db => ({
    query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      sink?.push({ sql, params: params ?? [] });
      return q.query<T>(sql, params);
    },
    transaction: (fn) => q.transaction((tx) => fn(wrap(tx))),
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    async record(fn) {
      sink = [];
      try {
        const result = await fn();
        return { result, statements: sink };
      } finally {
        sink = undefined;
      }
    },
  };
}

/** EXPLAIN (ANALYZE, BUFFERS) of one statement; the plan as text lines. */
export async function explainAnalyze(db: Db, s: Recorded): Promise<string[]> {
  const { rows } = await db.query<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, s.params.length ? s.params : undefined);
  return rows.map((r) => Object.values(r)[0]);
}

// ---------------------------------------------------------------------------------------------------------------
// The app over real HTTP

export interface HttpReply<T = any> {
  status: number;
  body: T;
  /** Request start to the last byte of the body (before JSON parsing). */
  ms: number;
  bytes: number;
}

/**
 * One keep-alive connection over loopback; requests are sequential, so each sample is the latency of one request
 * through Node's HTTP client, the kernel's loopback, Fastify (auth, validation, serialisation) and the database.
 */
export function httpClient(baseUrl: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(baseUrl);
  let token: string | undefined;
  function request<T = any>(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpReply<T>> {
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string | number> = { accept: 'application/json', ...(opts.headers ?? {}) };
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    return new Promise((resolvePromise, reject) => {
      const start = performance.now();
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const elapsed = performance.now() - start;
          const raw = Buffer.concat(chunks);
          let body: unknown = raw.toString('utf8');
          try {
            body = raw.length ? JSON.parse(body as string) : undefined;
          } catch {
            /* not JSON */
          }
          resolvePromise({ status: res.statusCode ?? 0, body: body as T, ms: elapsed, bytes: raw.length });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }
  return {
    request,
    setToken(t: string) {
      token = t;
    },
    close() {
      agent.destroy();
    },
  };
}

export type HttpClient = ReturnType<typeof httpClient>;

export interface BenchApp {
  ctx: Context;
  /** A keep-alive client carrying the vendor token. */
  client: HttpClient;
  baseUrl: string;
  vendorToken: string;
  /** A fresh keep-alive client (one connection), optionally with a bearer token; closed with the app. */
  newClient(token?: string): HttpClient;
  close(): Promise<void>;
}

/** Every benchmark sign-in comes from 127.0.0.1, often as one user: raise the limiter so sign-in itself is measured. */
export const RAISED_SIGNIN_LIMITS = { LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100000' };

/**
 * The whole API in-process (createContext + buildApp, as src/server.ts wires it) listening on an ephemeral loopback
 * port, with the vendor token already fetched. Request logging stays on at the server's default level (info) but goes
 * to /dev/null, so its cost is in the figures without flooding the terminal. `env` overrides the config; `log`
 * replaces the logger.
 */
export async function startBenchApp(
  bdb: BenchDb,
  db: ClosableDb = bdb.db,
  opts: { jobs?: boolean; env?: Record<string, string>; log?: pino.Logger } = {},
): Promise<BenchApp> {
  const config = loadConfig({
    DATA_DIR: bdb.dataDir,
    GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    GATEHOUSE_CLIENT_ID: BENCH_VENDOR.clientId,
    GATEHOUSE_API_KEY: BENCH_VENDOR.secret,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    ...opts.env,
  });
  const log = opts.log ?? pino({ level: config.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' } }, pino.destination({ dest: '/dev/null', sync: false }));
  const ctx = await createContext(config, db, log);
  await ctx.environment.bootstrap({ clientId: BENCH_VENDOR.clientId, apiKey: BENCH_VENDOR.secret });
  const app = await buildApp(ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  if (opts.jobs) ctx.jobs.start();
  const clients: HttpClient[] = [];
  const newClient = (token?: string) => {
    const c = httpClient(baseUrl);
    if (token) c.setToken(token);
    clients.push(c);
    return c;
  };
  const client = newClient();
  const auth = await client.request('POST', '/auth/vendor', { body: BENCH_VENDOR });
  if (auth.status !== 200) throw new Error(`vendor auth failed: ${auth.status} ${JSON.stringify(auth.body)}`);
  client.setToken(auth.body.token);
  return {
    ctx,
    client,
    baseUrl,
    vendorToken: auth.body.token,
    newClient,
    async close() {
      for (const c of clients) c.close();
      await app.close();
      await ctx.jobs.stop();
    },
  };
}

/**
 * Times `fn` sequentially: `warmup` untimed calls, then up to `n` timed ones, stopping early (after at least `minN`)
 * once `budgetMs` of wall time is spent, so a slow case cannot stretch the run.
 */
export async function measure(
  fn: () => Promise<HttpReply>,
  opts: { n: number; warmup?: number; budgetMs?: number; minN?: number; check?: (r: HttpReply) => void },
): Promise<Stats & { samples: number[] }> {
  for (let i = 0; i < (opts.warmup ?? 5); i++) opts.check?.(await fn());
  const samples: number[] = [];
  const start = performance.now();
  const minN = Math.min(opts.n, opts.minN ?? 50);
  while (samples.length < opts.n) {
    const r = await fn();
    opts.check?.(r);
    samples.push(r.ms);
    if (samples.length >= minN && opts.budgetMs !== undefined && performance.now() - start > opts.budgetMs) break;
  }
  return { ...stats(samples), samples };
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolvePort(port));
    });
  });
}

export interface ColdStart {
  /** Spawn to the first 200 from GET /health. */
  ms: number;
}

/**
 * Spawns `node --import tsx src/server.ts` with `env`, polls GET /health every 5 ms until it answers 200, then stops
 * the server with SIGTERM and waits for it to exit.
 */
export async function coldStart(env: Record<string, string>, timeoutMs = 60_000): Promise<ColdStart> {
  const port = await freePort();
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  let exited: number | null | undefined;
  const exitP = new Promise<void>((r) => child.once('exit', (code) => ((exited = code), r())));
  const probe = () =>
    new Promise<number>((r) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
        res.resume();
        res.on('end', () => r(res.statusCode ?? 0));
      });
      req.on('error', () => r(0));
    });
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`server exited with ${exited} before answering /health:\n${stderr.slice(-2000)}`);
      if (performance.now() - start > timeoutMs) throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${stderr.slice(-2000)}`);
      if ((await probe()) === 200) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return { ms: performance.now() - start };
  } finally {
    if (exited === undefined) child.kill('SIGTERM');
    await exitP;
  }
}

/** Runs `node --import tsx <script>` in the repository with `env`; resolves with the last stdout line that is JSON. */
export function runTsxScript(script: string, env: Record<string, string>, timeoutMs = 60_000): Promise<any> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').reverse().find((l) => l.startsWith('{"phases"'));
      if (code !== 0 || !line) reject(new Error(`${script} exited with ${code}:\n${err.slice(-2000)}`));
      else resolveRun(JSON.parse(line));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Output

export function formatTable(t: Table): string {
  const cells = [t.columns, ...t.rows.map((r) => r.map((c) => (c === null || c === undefined ? '–' : String(c))))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [`\n${t.title}`, line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)];
  for (const n of t.notes ?? []) out.push(`  * ${n}`);
  return out.join('\n');
}

export function machineInfo() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) model = m[1].trim();
  } catch {
    /* not Linux */
  }
  return {
    cpus: cpus().length,
    model,
    memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

export interface CountedCall {
  statements: string[];
  transactions: number;
  raw: { sql: string; params: unknown[] }[];
}

/**
 * The Db wrapped so that the statements of one request (and of the hooks that write after it) can be recorded:
 * `record` waits for the database to be quiet before and after. Exact counts, independent of the machine's load.
 */
export function countingDb(inner: ClosableDb) {
  let sink: CountedCall | undefined;
  let busy = 0;
  let lastActivity = 0;
  const quiet = async () => {
    do await new Promise((r) => setTimeout(r, 25));
    while (busy > 0 || performance.now() - lastActivity < 25);
  };
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      sink?.statements.push(sql.replace(/\s+/g, ' ').trim());
      sink?.raw.push({ sql, params: params ?? [] });
      busy++;
      try {
        return await q.query<T>(sql, params);
      } finally {
        busy--;
        lastActivity = performance.now();
      }
    },
    transaction: (fn) => {
      if (sink) sink.transactions++;
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    async record<T>(fn: () => Promise<T>): Promise<{ result: T; call: CountedCall }> {
      await quiet();
      const call: CountedCall = { statements: [], transactions: 0, raw: [] };
      sink = call;
      try {
        const result = await fn();
        await quiet();
        return { result, call };
      } finally {
        sink = undefined;
      }
    },
  };
}


/** Statements of the audit hook and its chainer. */
export const isAuditSql = (sql: string) => /\baudit_(chain|log|staging)\b/.test(sql);

/** Per recorded call: statements, transactions, round trips (BEGIN/COMMIT count), the audit's share, each text's count. */
export function callStats(calls: CountedCall[]) {
  const n = calls.length;
  const bySql = new Map<string, number>();
  for (const c of calls) for (const s of c.statements) bySql.set(s, (bySql.get(s) ?? 0) + 1);
  const statements = calls.reduce((a, c) => a + c.statements.length, 0) / n;
  const transactions = calls.reduce((a, c) => a + c.transactions, 0) / n;
  const audit = calls.reduce((a, c) => a + c.statements.filter(isAuditSql).length, 0) / n;
  return { n, statements, transactions, roundTrips: statements + 2 * transactions, audit, perCall: [...bySql.entries()].map(([sql, k]) => ({ sql, perCall: k / n })) };
}
