import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../src/storage/db.ts';
import { DECISION_PATHS, type DecisionKind } from '../src/modules/entitlements/engine/index.ts';
import {
  BENCH_ENCRYPTION_KEY,
  BENCH_VENDOR,
  freePort,
  httpClient,
  ms,
  openBenchDb,
  REPO_ROOT,
  stats,
  type AreaResult,
  type BenchDb,
  type BenchOptions,
  type Table,
} from './lib.ts';

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

const CONNECTIONS = 50;
const THROUGHPUT_RATIO_TARGET = 0.8;
const RSS_TARGET_MB = 200;
const LOAD_TARGET_MS = 1000;
const UNCHANGED_RATIO = 0.9;
const PROPAGATION_TARGET_MS = 2000;
const QUIET_LOAD = 1.2;

interface Sizes { accounts: number; features: number; plans: number; grants: number; flags: number; routes: number }
const SMALL: Sizes = { accounts: 200, features: 20, plans: 5, grants: 1000, flags: 5, routes: 30 };
const LARGE: Sizes = { accounts: 10_000, features: 100, plans: 20, grants: 50_000, flags: 10, routes: 60 };
const LARGE_QUICK: Sizes = { accounts: 1000, features: 30, plans: 8, grants: 5000, flags: 5, routes: 30 };

// ---------------------------------------------------------------------------------------------------------------
// Processes: every child is killed when this process exits, however it exits.

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface Proc { proc: ChildProcess; output: () => string; lines: () => string[] }

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

async function stopProc(p: Proc): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.proc.once('exit', () => r()));
  p.proc.kill('SIGTERM');
  const t = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, p?: Proc, everyMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p && p.proc.exitCode !== null) throw new Error(`${what}: the process exited with ${p.proc.exitCode}\n${p.output().slice(-3000)}`);
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${p ? `\n${p.output().slice(-3000)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const statusOf = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;

async function startServer(bdb: BenchDb): Promise<{ p: Proc; url: string }> {
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
  await waitFor('server healthy', async () => ((await statusOf(`${url}/health`)) === 200 ? true : undefined), 120_000, p, 50);
  return { p, url };
}

interface Agent { p: Proc; url: string; dir: string; spawnToReadyMs: number }

/** An agent with default settings (AGENT_POLL_MS unset: 1000 ms), a fresh data dir; ready = /health?bundles 200. */
async function startAgent(serverUrl: string, wantOffset: number): Promise<Agent> {
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
  await waitFor('agent loaded the snapshot', async () => {
    const r = await fetch(`${url}/health?bundles`, { signal: AbortSignal.timeout(5000) });
    return r.status === 200 && ((await r.json()) as { snapshotOffset: number }).snapshotOffset === wantOffset ? true : undefined;
  }, 60_000, p);
  return { p, url, dir, spawnToReadyMs: performance.now() - started };
}

/** The agent's own account of its last snapshot load (sync.ts logs fetch/parse/store/compile ms). */
function loadLog(a: Agent): Record<string, number> | undefined {
  const line = a.p.lines().reverse().find((l) => l.includes('entitlements snapshot loaded'));
  return line ? (JSON.parse(line) as Record<string, number>) : undefined;
}

function rssMb(pid: number): { rss: number; hwm: number } {
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

async function startBaseline(): Promise<{ p: Proc; url: string }> {
  const port = await freePort();
  const p = spawnNode(['--input-type=module', '-e', BASELINE], { PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('baseline listening', async () => ((await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status === 200 ? true : undefined), 30_000, p);
  return { p, url };
}

// ---------------------------------------------------------------------------------------------------------------
// The quiet-machine rule

interface LoadRecord { before: string; waitedS: number; load1: number; quiet: boolean }

/** Waiting is bounded per block (10 minutes) and per run (the same 10 minutes shared by every block). */
let waitBudgetS = 600;

async function quiet(label: string, o: BenchOptions): Promise<LoadRecord> {
  const start = Date.now();
  for (;;) {
    const l1 = loadavg()[0];
    const waited = Math.round((Date.now() - start) / 1000);
    if (l1 <= QUIET_LOAD || o.quick || waited >= waitBudgetS) {
      waitBudgetS = Math.max(0, waitBudgetS - waited);
      const rec = { before: label, waitedS: waited, load1: Number(l1.toFixed(2)), quiet: l1 <= QUIET_LOAD };
      o.log(`[load] before ${label}: 1-min load ${rec.load1}${rec.quiet ? '' : ' (ABOVE 1.2: measured anyway)'}${waited ? `, after waiting ${waited} s` : ''}`);
      return rec;
    }
    o.log(`[load] before ${label}: 1-min load ${l1.toFixed(2)} > ${QUIET_LOAD}; waiting 30 s (${waited} s so far)`);
    await new Promise((r) => setTimeout(r, 30_000));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Data: seeded by SQL straight into the entitlement tables (not measured).

const RULES_ENTERPRISE = JSON.stringify([{ description: 'enterprise tier', conditionLogic: 'and', treatment: 'true', conditions: [{ attribute: 'tier', op: 'in_list', value: { list: ['enterprise'] }, negate: false }] }]);
const RULES_FLAG = JSON.stringify([
  { description: 'beta testers', conditionLogic: 'and', treatment: 'true', conditions: [{ attribute: 'beta', op: 'is', value: { boolean: true }, negate: false }, { attribute: 'seats', op: 'greater_than', value: { number: 10 }, negate: false }] },
  { description: 'internal', conditionLogic: 'and', treatment: 'true', conditions: [{ attribute: 'email', op: 'ends_with', value: { list: ['@gatehouse.example'] }, negate: false }] },
]);

export const PROBE = { tenant: 'probe-account', feature: 'probe-feature', plan: 'Probe plan' };

/**
 * `accounts` accounts acct-1..N; `features` features feature-j, each linked to perm-j.read and perm-j.write; plans
 * "Plan i" each bundling every feature j with j % plans = i % plans plus feature-1..3, a quarter of them with a
 * targeting rule, a third with a 30-day default limit; `grants` grants spread 5 per account over distinct plans (k = 3, 4
 * to a user of the account), one in five expired, one in five expiring in the future; flags on the first features
 * with two rules; route rules over /api/v1/resource-j/{id}. Plus the probe account/feature/plan of the propagation runs.
 */
async function seed(db: Db, s: Sizes): Promise<{ offset: number; ms: number }> {
  const t0 = performance.now();
  const per = Math.ceil(s.grants / s.accounts);
  await db.query(`INSERT INTO tenants (tenant_id, id, name) SELECT 'acct-' || i, md5('agent-acct-' || i)::uuid, 'Account ' || i FROM generate_series(1, ${s.accounts}) i`);
  await db.query(`INSERT INTO tenants (tenant_id, id, name) VALUES ($1, md5('probe')::uuid, 'Probe')`, [PROBE.tenant]);
  await db.query(`INSERT INTO entitlement_features (id, key, name, permissions)
    SELECT md5('f' || j)::uuid, 'feature-' || j, 'Feature ' || j, ARRAY['perm-' || j || '.read', 'perm-' || j || '.write'] FROM generate_series(1, ${s.features}) j`);
  await db.query(`INSERT INTO entitlement_features (id, key, name) VALUES (md5('probe-f')::uuid, $1, 'Probe feature')`, [PROBE.feature]);
  await db.query(`INSERT INTO entitlement_plans (id, name, default_treatment, rules, default_time_limitation)
    SELECT md5('p' || i)::uuid, 'Plan ' || i, 'false', CASE WHEN i % 4 = 0 THEN $1::jsonb ELSE '[]'::jsonb END, CASE WHEN i % 3 = 0 THEN 30 END
      FROM generate_series(1, ${s.plans}) i`, [RULES_ENTERPRISE]);
  await db.query(`INSERT INTO entitlement_plans (id, name) VALUES (md5('probe-p')::uuid, $1)`, [PROBE.plan]);
  await db.query(`INSERT INTO entitlement_plan_features (plan_id, feature_id)
    SELECT md5('p' || i)::uuid, md5('f' || j)::uuid FROM generate_series(1, ${s.plans}) i, generate_series(1, ${s.features}) j
     WHERE j % ${s.plans} = i % ${s.plans} OR j <= 3`);
  await db.query(`INSERT INTO entitlement_plan_features (plan_id, feature_id) VALUES (md5('probe-p')::uuid, md5('probe-f')::uuid)`);
  // Grant g (0-based): account t = g % accounts, its k-th grant (k = g / accounts) of plan (t + 3k) % plans.
  await db.query(`INSERT INTO entitlement_grants (tenant_id, id, plan_id, user_id, expiration_date)
    SELECT 'acct-' || (1 + g % ${s.accounts}), md5('g' || g)::uuid, md5('p' || (1 + ((g % ${s.accounts}) + 3 * (g / ${s.accounts})) % ${s.plans}))::uuid,
           CASE WHEN g / ${s.accounts} >= 3 THEN 'user-' || (g / ${s.accounts}) END,
           CASE WHEN g % 5 = 0 THEN now() - interval '3 days' WHEN g % 5 = 1 THEN now() + interval '300 days' END
      FROM generate_series(0, ${s.grants - 1}) g WHERE g / ${s.accounts} < ${Math.min(per, s.plans)}`);
  await db.query(`INSERT INTO entitlement_feature_flags (id, feature_id, name, "on", default_treatment, off_treatment, rules)
    SELECT md5('ff' || j)::uuid, md5('f' || j)::uuid, 'flag ' || j, j % 3 <> 0, 'false', 'false', $1::jsonb FROM generate_series(1, ${s.flags}) j`, [RULES_FLAG]);
  await db.query(`INSERT INTO entitlement_routes (id, method, path, priority, policy_type, rules)
    SELECT md5('r' || i)::uuid, (ARRAY['GET', 'POST', 'PUT', 'DELETE'])[1 + i % 4], '/api/v1/resource-' || i || '/{id}', i,
           CASE WHEN i % 10 = 0 THEN 'deny' WHEN i % 5 = 0 THEN 'allow' ELSE 'ruleBased' END,
           CASE WHEN i % 5 = 0 THEN '[]'::jsonb ELSE jsonb_build_array(
             jsonb_build_object('id', md5('rr' || i)::uuid, 'type', 'permission', 'value', 'perm-' || (1 + i % ${s.features}) || '.read'),
             jsonb_build_object('id', md5('rf' || i)::uuid, 'type', 'feature', 'value', 'feature-' || (1 + i % ${s.features}))) END
      FROM generate_series(1, ${s.routes}) i`);
  await db.query(`INSERT INTO entitlement_routes (id, method, path, priority, policy_type) VALUES (md5('public')::uuid, '*', '/public/*', ${s.routes + 1}, 'allow')`);
  const { rows } = await db.query<{ n: string }>('UPDATE entitlement_settings SET snapshot_offset = snapshot_offset + 1 WHERE id = 1 RETURNING snapshot_offset AS n');
  return { offset: Number(rows[0].n), ms: performance.now() - t0 };
}

async function counts(db: Db) {
  const q = async (t: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
  return { accounts: await q('tenants'), features: await q('entitlement_features'), plans: await q('entitlement_plans'), grants: await q('entitlement_grants'), flags: await q('entitlement_feature_flags'), routes: await q('entitlement_routes') };
}

// ---------------------------------------------------------------------------------------------------------------
// Load

/** 40 requests cycled by every connection: 50% feature, 30% permission, 20% route, over spread accounts and users. */
function requestMix(s: Sizes): autocannon.Request[] {
  const out: autocannon.Request[] = [];
  const tiers = ['free', 'team', 'enterprise'];
  for (let i = 0; i < 40; i++) {
    const tenant = `acct-${1 + ((i * 7919) % s.accounts)}`;
    const f = 1 + ((i * 31) % s.features);
    const subjectContext = {
      tenantId: tenant,
      userId: i % 2 ? `user-${3 + (i % 2)}` : `u-${i}`,
      permissions: [`perm-${f}.read`, `perm-${1 + ((f + 4) % s.features)}.*`, 'account.read', 'users.read', 'users.write', 'billing.view'],
      attributes: { tier: tiers[i % 3], seats: i * 3, beta: i % 4 === 0, email: `user${i}@example.com` },
    };
    const kind: DecisionKind = i % 10 < 5 ? 'feature' : i % 10 < 8 ? 'permission' : 'route';
    const requestContext = kind === 'feature' ? { featureKey: `feature-${f}` }
      : kind === 'permission' ? { permissionKey: `perm-${1 + ((i * 13) % s.features)}.read` }
      : i % 20 === 9 ? { method: 'GET', path: '/public/docs/index.html' } : { method: ['GET', 'POST', 'PUT', 'DELETE'][(i * 3) % 4], path: `/api/v1/resource-${1 + ((i * 3) % s.routes)}/42` };
    out.push({ method: 'POST', path: DECISION_PATHS[kind], headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { subjectContext, requestContext } }) });
  }
  return out;
}

interface LoadResult { rps: number; total: number; p50: number; p99: number; mean: number; non2xx: number; errors: number; seconds: number }

async function cannon(url: string, requests: autocannon.Request[], seconds: number): Promise<LoadResult> {
  const r = await autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests });
  return {
    rps: Math.round(r.requests.average), total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average,
    non2xx: r.non2xx, errors: r.errors + r.timeouts, seconds,
  };
}

/** Checks the mix answers 200 with both outcomes present (not all false because of a seeding mistake). */
async function sanity(url: string, requests: autocannon.Request[]): Promise<{ true: number; false: number }> {
  const out = { true: 0, false: 0 };
  for (const r of requests) {
    const res = await fetch(`${url}${r.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: r.body as string });
    if (res.status !== 200) throw new Error(`${r.path} answered ${res.status}: ${await res.text()}`);
    const b = (await res.json()) as { result: { result: boolean } };
    out[b.result.result ? 'true' : 'false']++;
  }
  if (!out.true || !out.false) throw new Error(`the request mix should have both outcomes: ${JSON.stringify(out)}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Propagation

async function propagation(serverUrl: string, agentUrl: string, changes: number, log: (l: string) => void) {
  const api = httpClient(serverUrl);
  const auth = await api.request('POST', '/auth/vendor', { body: BENCH_VENDOR });
  api.setToken(auth.body.token);
  const plan = (await api.request('GET', '/entitlements/resources/plans/v1?limit=1000')).body.items.find((p: { name: string }) => p.name === PROBE.plan);
  if (!plan) throw new Error('probe plan missing');
  const agent = httpClient(agentUrl);
  const body = { input: { subjectContext: { tenantId: PROBE.tenant }, requestContext: { featureKey: PROBE.feature } } };
  const decide = async () => (await agent.request('POST', DECISION_PATHS.feature, { body })).body.result.result as boolean;
  if ((await decide()) !== false) throw new Error('probe account is entitled before the first change');
  const samples: number[] = [];
  const writes: number[] = [];
  let grantId: string | undefined;
  for (let i = 0; i < changes; i++) {
    // A random phase against the agent's poll timer.
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 1000));
    const want = grantId === undefined;
    const t0 = performance.now();
    const w = want
      ? await api.request('POST', '/entitlements/resources/entitlements/v2', { body: { planId: plan.id, tenantId: PROBE.tenant, expirationDate: null } })
      : await api.request('DELETE', `/entitlements/resources/entitlements/v2/${grantId}`);
    if (w.status !== 200) throw new Error(`management write answered ${w.status}: ${JSON.stringify(w.body)}`);
    writes.push(w.ms);
    grantId = want ? w.body.id : undefined;
    for (;;) {
      if ((await decide()) === want) break;
      if (performance.now() - t0 > 20_000) throw new Error(`change ${i} not reflected within 20 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    samples.push(performance.now() - t0);
  }
  api.close();
  agent.close();
  const s = stats(samples);
  log(`  propagation: p50 ${s.p50.toFixed(0)} ms over ${s.n} changes`);
  return { propagation: s, write: stats(writes) };
}

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
      title: 'snapshot load by the agent (its own log: fetch = GET of the snapshot incl. server build; store = atomic write to disk)',
      columns: ['snapshot', 'bytes', 'fetch ms', 'parse ms', 'compile ms', 'store ms', 'fetch+parse+compile ms', 'spawn→ready ms', 'RSS after load MB'],
      rows: [
        ['small', smallLoad?.bytes ?? null, smallLoad?.fetchMs ?? null, smallLoad?.parseMs ?? null, smallLoad?.compileMs ?? null, smallLoad?.storeMs ?? null,
          ms((smallLoad?.fetchMs ?? NaN) + (smallLoad?.parseMs ?? NaN) + (smallLoad?.compileMs ?? NaN), 1), ms(a1.spawnToReadyMs, 0), rssSmall.rss],
        ['large', largeLoad.bytes, largeLoad.fetchMs, largeLoad.parseMs, largeLoad.compileMs, largeLoad.storeMs, ms(loadMs, 1), ms(a2.spawnToReadyMs, 0), rssAfterLoad.rss],
      ],
      notes: [`large: ${JSON.stringify(data.largeCounts)}`, 'spawn→ready includes node + tsx start-up and vendor sign-in'],
    });

    // (a) + (b) throughput: baseline, small-snapshot agent, large-snapshot agent, back to back, `rounds` times.
    const runs: { round: number; target: string; r: LoadResult }[] = [];
    if (want('throughput') || want('large')) {
      const smallMix = requestMix(SMALL);
      const largeMix = requestMix(large);
      const baseMix = smallMix.map((r) => ({ ...r }));
      data.sanity = { small: await sanity(a1.url, smallMix), large: await sanity(a2.url, largeMix) };
      loads.push(await quiet('throughput', o));
      for (const [url, mix] of [[base.url, baseMix], [a1.url, smallMix], [a2.url, largeMix]] as const) await cannon(url, mix, warmup);
      for (let round = 1; round <= rounds; round++) {
        for (const [target, url, mix] of [['fastify baseline', base.url, baseMix], ['agent, small snapshot', a1.url, smallMix], ['agent, large snapshot', a2.url, largeMix]] as const) {
          const r = await cannon(url, mix, seconds);
          o.log(`  round ${round} ${target}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`);
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
        rows: runs.map(({ round, target, r }) => [round, target, r.rps, r.p50, r.p99, ms(r.mean, 2), r.non2xx, r.errors]),
      });
    }
    const baseRps = mean('fastify baseline', 'rps');
    const smallRps = mean('agent, small snapshot', 'rps');
    const largeRps = mean('agent, large snapshot', 'rps');
    data.throughput = { baseRps, smallRps, largeRps, runs };
    if (runs.length) {
      targets.push({ name: 'agent decisions/s vs trivial Fastify route', target: `≥ ${THROUGHPUT_RATIO_TARGET * 100}%`, measured: `${((smallRps / baseRps) * 100).toFixed(0)}% (${smallRps.toFixed(0)} vs ${baseRps.toFixed(0)} req/s; p50 ${mean('agent, small snapshot', 'p50').toFixed(1)} ms, p99 ${mean('agent, small snapshot', 'p99').toFixed(1)} ms)`, met: smallRps >= THROUGHPUT_RATIO_TARGET * baseRps });
      targets.push({ name: 'decisions/s, large vs small snapshot', target: `≥ ${UNCHANGED_RATIO * 100}% (unchanged)`, measured: `${((largeRps / smallRps) * 100).toFixed(0)}% (${largeRps.toFixed(0)} vs ${smallRps.toFixed(0)} req/s)`, met: largeRps >= UNCHANGED_RATIO * smallRps });
    }
    targets.push({ name: 'agent RSS with the large snapshot', target: `< ${RSS_TARGET_MB} MB`, measured: `${rssAfterLoad.rss} MB after load, ${rssAfterRun.rss} MB after load runs (peak ${rssAfterRun.hwm} MB)`, met: Math.max(rssAfterLoad.rss, rssAfterRun.rss) < RSS_TARGET_MB });
    targets.push({ name: 'large snapshot load (fetch+parse+compile)', target: `< ${LOAD_TARGET_MS} ms`, measured: `${loadMs.toFixed(0)} ms (${largeLoad.fetchMs} + ${largeLoad.parseMs} + ${largeLoad.compileMs})`, met: loadMs < LOAD_TARGET_MS });

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
          ['small', p1.propagation.n, ms(p1.propagation.p50, 0), ms(p1.propagation.p90, 0), ms(p1.propagation.max, 0), ms(p1.propagation.min, 0), ms(p1.write.p50, 1)],
          ['large', p2.propagation.n, ms(p2.propagation.p50, 0), ms(p2.propagation.p90, 0), ms(p2.propagation.max, 0), ms(p2.propagation.min, 0), ms(p2.write.p50, 1)],
        ],
        notes: ['a grant of the probe plan is created, then removed, alternately; each after a random 0.2–1.2 s pause'],
      });
      targets.push({ name: 'propagation p50 (default poll)', target: `< ${PROPAGATION_TARGET_MS} ms`, measured: `${p1.propagation.p50.toFixed(0)} ms small, ${p2.propagation.p50.toFixed(0)} ms large`, met: p1.propagation.p50 < PROPAGATION_TARGET_MS && p2.propagation.p50 < PROPAGATION_TARGET_MS });
    }
    data.loadChecks = loads;
    tables.push({ title: 'machine load before each measured block (1-minute average; rule: ≤ 1.2, else wait 30 s, up to 10 min)', columns: ['block', 'load1', 'waited s', 'quiet'], rows: loads.map((l) => [l.before, l.load1, l.waitedS, l.quiet ? 'yes' : 'NO']) });
    return { area: 'agent', store: o.store, tables, data, targets };
  } finally {
    for (const p of procs.reverse()) await stopProc(p).catch(() => {});
    for (const d of agentDirs) rmSync(d, { recursive: true, force: true });
    for (const d of dbs) await d.destroy().catch(() => {});
  }
}
