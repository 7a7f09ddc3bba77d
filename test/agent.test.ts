import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { applyTable, clearEntitlements, KIND_PATH, loadTables, requestBody } from './decisions/tables.ts';
import { DECISION_PATHS } from '../src/modules/entitlements/engine/index.ts';

/** A real server process and a real agent process: decisions over HTTP, change propagation, server outage, restart. */

const CREDS = { clientId: 'agent-test', secret: 'agent-test-secret-0123456789' };
const POLL_MS = 200;
const started: ChildProcess[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function spawnEntry(entry: string, env: Record<string, string>) {
  let out = '';
  const proc = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEHOUSE_CLIENT_ID: CREDS.clientId,
      GATEHOUSE_API_KEY: CREDS.secret,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  return { proc, output: () => out };
}

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  ms: number,
  output?: () => string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${output ? `\n${output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function stop(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null) return proc.exitCode;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  proc.kill('SIGTERM');
  return exited;
}

async function http(url: string, init: { method?: string; token?: string; body?: unknown; raw?: string } = {}) {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body !== undefined || init.raw ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.raw ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

describe('entitlements agent process fed by a server process', () => {
  const dirs: string[] = [];
  let database: string | undefined;
  let serverPort: number;
  let agentPort: number;
  let serverEnv: Record<string, string>;
  let agentEnv: Record<string, string>;
  let server: ReturnType<typeof spawnEntry>;
  let agent: ReturnType<typeof spawnEntry>;
  let token: string;
  const api = (path: string) => `http://127.0.0.1:${serverPort}${path}`;
  const agentUrl = (path: string) => `http://127.0.0.1:${agentPort}${path}`;
  const call = (method: string, path: string, body?: unknown) => http(api(path), { method, token, body });
  const serverOffset = async () =>
    (await call('GET', '/entitlements/api/v1/vendor-entitlements-snapshot-offset')).body.snapshotOffset as number;
  const agentOffset = async () => {
    const r = await http(agentUrl('/health?bundles'));
    return r.status === 200 ? (r.body.snapshotOffset as number) : undefined;
  };
  const caughtUp = async () => {
    const want = await serverOffset();
    return waitFor(
      'agent follows the server offset',
      async () => ((await agentOffset()) === want ? true : undefined),
      10_000,
      agent.output,
    );
  };
  const startServer = async () => {
    server = spawnEntry('src/server.ts', serverEnv);
    await waitFor(
      'server healthy',
      async () => ((await fetch(api('/health'))).status === 200 ? true : undefined),
      120_000,
      server.output,
    );
  };
  const startAgent = async () => {
    agent = spawnEntry('src/agent.ts', agentEnv);
    await waitFor(
      'agent alive',
      async () => ((await fetch(agentUrl('/health'))).status === 200 ? true : undefined),
      30_000,
      agent.output,
    );
  };

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-srv-'));
    const agentDir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-'));
    dirs.push(dataDir, agentDir);
    serverPort = await freePort();
    agentPort = await freePort();
    const db: Record<string, string> = {};
    if (process.env.TEST_DATABASE_URL) {
      database = `gh_agent_${randomBytes(4).toString('hex')}`;
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      await c.query(`CREATE DATABASE ${database}`);
      await c.end();
      const u = new URL(process.env.TEST_DATABASE_URL);
      u.pathname = `/${database}`;
      db.DATABASE_URL = u.toString();
    }
    serverEnv = {
      PORT: String(serverPort),
      DATA_DIR: dataDir,
      PUBLIC_URL: 'http://gatehouse.test',
      GATEHOUSE_ENCRYPTION_KEY: 'agent-test-key',
      ...db,
    };
    agentEnv = {
      AGENT_PORT: String(agentPort),
      AGENT_SERVER_URL: `http://127.0.0.1:${serverPort}`,
      AGENT_POLL_MS: String(POLL_MS),
      AGENT_DATA_DIR: agentDir,
      DATA_DIR: agentDir,
    };
    await startServer();
    await startAgent();
    token = (await http(api('/auth/vendor'), { method: 'POST', body: CREDS })).body.token;
  });

  after(async () => {
    // Even on failure: no process may outlive the test.
    for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (database) {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    }
  });

  test('health: alive at once; ?bundles once a snapshot is loaded', async () => {
    assert.equal((await http(agentUrl('/health'))).status, 200);
    await caughtUp();
    assert.equal((await http(agentUrl('/health?bundles'))).status, 200);
  });

  test('malformed requests: 400 {code: invalid_parameter}; well-formed unknowns are decisions', async () => {
    const p = agentUrl(DECISION_PATHS.feature);
    for (const [init, re] of [
      [{ method: 'POST', raw: '{not json' }, /not valid JSON/],
      [{ method: 'POST', body: {} }, /input is required/],
      [
        { method: 'POST', body: { input: { subjectContext: { userId: 'u' }, requestContext: { featureKey: 'x' } } } },
        /tenantId/,
      ],
      [
        {
          method: 'POST',
          body: { input: { subjectContext: { tenantId: 't', permissions: 5 }, requestContext: { featureKey: 'x' } } },
        },
        /permissions/,
      ],
    ] as const) {
      const r = await http(p, init);
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'invalid_parameter');
      assert.match(r.body.message, re);
    }
    const m = await http(agentUrl(DECISION_PATHS.route), {
      method: 'POST',
      body: { input: { subjectContext: { tenantId: 't' }, requestContext: { method: 'BREW', path: '/' } } },
    });
    assert.equal(m.status, 400);
    const ok = await http(`${p}?metrics=true`, {
      method: 'POST',
      body: {
        input: {
          subjectContext: { tenantId: 'ghost', userId: null, permissions: [], attributes: {} },
          requestContext: { featureKey: 'ghost' },
        },
      },
    });
    assert.equal(ok.status, 200);
    assert.match(ok.body.decision_id, /^[0-9a-f-]{36}$/);
    assert.ok(ok.body.metrics.timer_server_handler_ns > 0);
    assert.deepEqual(ok.body.result, { result: false, justification: 'MISSING_FEATURE' });
    assert.deepEqual(
      (
        await http(p, {
          method: 'POST',
          body: { input: { subjectContext: { tenantId: 'ghost' }, requestContext: { featureKey: 'ghost' } } },
        })
      ).body.metrics,
      {},
    );
  });

  test('decision routes: any content type is JSON, keep-alive, body limit 413, other methods and paths 404', async () => {
    const p = agentUrl(DECISION_PATHS.permission);
    const body = JSON.stringify({
      input: { subjectContext: { tenantId: 'ghost', permissions: ['a.b'] }, requestContext: { permissionKey: 'a.b' } },
    });
    const plain = await fetch(p, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    assert.equal(plain.status, 200);
    assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(plain.headers.get('connection'), 'keep-alive');
    const decided = (await plain.json()) as { result: { result: boolean } };
    assert.equal(typeof decided.result.result, 'boolean');
    // Chunked, no content type: the body is still read whole.
    const chunked = await fetch(p, { method: 'POST', body: new Blob([body]).stream(), duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 200);
    const big = await fetch(p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"pad":"${'x'.repeat(1024 * 1024 + 10)}"}`,
    });
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as { code: string }).code, 'invalid_parameter');
    const get = await http(p);
    assert.equal(get.status, 404);
    assert.equal(get.body.code, 'resource_not_found');
    const elsewhere = await http(agentUrl('/v1/data/e10s/nothing'), { method: 'POST', body: {} });
    assert.equal(elsewhere.status, 404);
    const empty = await http(p, { method: 'POST' });
    assert.equal(empty.status, 400);
    assert.match(empty.body.message, /input is required/);
  });

  for (const table of loadTables()) {
    test(`decision table ${table.file} against the agent`, async () => {
      await clearEntitlements(call);
      await applyTable(call, table, async (id) => {
        const r = await call('POST', '/tenants/resources/tenants/v1', { tenantId: id, name: id });
        assert.ok(r.status === 201 || r.body.errorCode === 'GH-30002', JSON.stringify(r.body));
      });
      await caughtUp();
      for (const c of table.cases) {
        const r = await http(agentUrl(DECISION_PATHS[c.kind]), { method: 'POST', body: requestBody(c) });
        assert.equal(r.status, 200, c.name);
        assert.deepEqual(r.body.result, c.expect, `${table.file}: ${c.name} (${KIND_PATH[c.kind]})`);
      }
    });
  }

  test('a plan change reaches the agent within the poll interval; the agent outlives the server and restarts from disk', async () => {
    await clearEntitlements(call);
    const tenant = await call('POST', '/tenants/resources/tenants/v1', { tenantId: 'follow', name: 'follow' });
    assert.ok(tenant.status === 201 || tenant.status === 409);
    await call('POST', '/entitlements/resources/features/v1', { name: 'F', key: 'follow-f' });
    await call('POST', '/entitlements/resources/features/v1', { name: 'G', key: 'follow-g' });
    const plan = (
      await call('POST', '/entitlements/resources/plans/v1', { name: 'follow-plan', featureKeys: ['follow-f'] })
    ).body;
    await call('POST', '/entitlements/resources/entitlements/v2', { planId: plan.id, tenantId: 'follow' });
    await caughtUp();
    const ask = async (featureKey: string) =>
      (
        await http(agentUrl(DECISION_PATHS.feature), {
          method: 'POST',
          body: { input: { subjectContext: { tenantId: 'follow' }, requestContext: { featureKey } } },
        })
      ).body.result.result as boolean;
    assert.equal(await ask('follow-f'), true);
    assert.equal(await ask('follow-g'), false);

    const changed = Date.now();
    assert.equal(
      (await call('PATCH', `/entitlements/resources/plans/v1/${plan.id}`, { featureKeys: ['follow-g'] })).status,
      200,
    );
    await waitFor(
      'agent sees the plan change',
      async () => ((await ask('follow-g')) ? true : undefined),
      POLL_MS * 5 + 1000,
      agent.output,
    );
    const took = Date.now() - changed;
    assert.ok(took <= POLL_MS * 5 + 1000, `propagation took ${took} ms`);
    assert.equal(await ask('follow-f'), false);

    assert.equal(await stop(server.proc), 0, 'server drains and exits 0');
    await new Promise((r) => setTimeout(r, POLL_MS * 3));
    assert.equal(await ask('follow-g'), true, 'the agent keeps answering while the server is down');
    assert.equal((await http(agentUrl('/health?bundles'))).status, 200);

    assert.equal(await stop(agent.proc), 0, 'agent exits 0 on SIGTERM');
    assert.ok(existsSync(join(agentEnv.AGENT_DATA_DIR, 'entitlements-snapshot.json')), 'snapshot stored on disk');
    await startAgent();
    await waitFor(
      'restarted agent loads its stored snapshot',
      async () => ((await http(agentUrl('/health?bundles'))).status === 200 ? true : undefined),
      10_000,
      agent.output,
    );
    assert.equal(await ask('follow-g'), true, 'answers from the stored snapshot with the server down');
    assert.equal(await ask('follow-f'), false);
  });
});
