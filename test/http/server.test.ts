import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';

/** The runtime contract, end to end: a real `src/server.ts` process, started, stopped and restarted. */

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Running {
  proc: ChildProcess;
  port: number;
  stdout: () => string;
  url: (path: string) => string;
}

const started: ChildProcess[] = [];

async function start(env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  let out = '';
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}):\n${out}`);
    const ok = await fetch(url('/health')).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`server not healthy in 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, port, stdout: () => out, url };
}

async function stop(r: Running): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => r.proc.once('exit', (code) => resolve(code)));
  r.proc.kill('SIGTERM');
  return exited;
}

async function json(url: string, init: { method?: string; token?: string; body?: unknown } = {}) {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

function credentialsFrom(stdout: string) {
  const clientId = /GATEHOUSE_CLIENT_ID=(\S+)/.exec(stdout)?.[1];
  const secret = /GATEHOUSE_API_KEY=(\S+)/.exec(stdout)?.[1];
  return clientId && secret ? { clientId, secret } : undefined;
}

describe('npm start runtime contract', () => {
  const dirs: string[] = [];
  const databases: string[] = [];

  /** In PostgreSQL mode, a database of its own for each server under test (none with PGlite). */
  async function freshDatabase(): Promise<Record<string, string>> {
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

  after(async () => {
    // A failed assertion must not leave a server running (the test process would wait on it).
    for (const p of started) if (p.exitCode === null) p.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (databases.length && process.env.TEST_DATABASE_URL) {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      for (const name of databases) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    }
  });

  test('first start generates and prints credentials once; data survives a restart; SIGTERM exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-server-'));
    dirs.push(dataDir);
    // The issuer is PUBLIC_URL; it must not change between runs for old tokens to stay valid.
    // At info level, so the secrets check below also covers the access log.
    const env = {
      DATA_DIR: dataDir,
      PUBLIC_URL: 'http://gatehouse.test',
      LOG_LEVEL: 'info',
      ...(await freshDatabase()),
    };

    const first = await start(env);
    const creds = credentialsFrom(first.stdout());
    assert.ok(creds, `credentials printed on first start:\n${first.stdout()}`);
    const auth = await json(first.url('/auth/vendor'), { method: 'POST', body: creds });
    assert.equal(auth.status, 200);
    const created = await json(first.url('/tenants/resources/tenants/v1'), {
      method: 'POST',
      token: auth.body.token,
      body: { tenantId: 'kept', name: 'Kept' },
    });
    assert.equal(created.status, 201);
    assert.equal(await stop(first), 0);
    assert.ok(!/"(secret|apiKey)"/.test(first.stdout()), 'no secret in the logs');
    // One access-log line per request, on completion: the request, the status and the response time, under its trace id.
    const lines = first
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const vendorLines = lines.filter((l) => l.req?.url === '/auth/vendor');
    assert.equal(vendorLines.length, 1, JSON.stringify(vendorLines));
    assert.equal(vendorLines[0].msg, 'request completed');
    assert.equal(vendorLines[0].req.method, 'POST');
    assert.equal(vendorLines[0].res.statusCode, 200);
    assert.equal(typeof vendorLines[0].responseTime, 'number');
    assert.match(vendorLines[0].traceId, /^[0-9a-f]{32}$/);

    const second = await start(env);
    assert.equal(credentialsFrom(second.stdout()), undefined, 'credentials are printed only once');
    const again = await json(second.url('/auth/vendor'), { method: 'POST', body: creds });
    assert.equal(again.status, 200, 'the stored (hashed) credentials still work');
    const kept = await json(second.url('/tenants/resources/tenants/v2/kept'), { token: again.body.token });
    assert.equal(kept.body.name, 'Kept');
    // A token signed before the restart still verifies: the signing key persisted (encrypted) in the database.
    const old = await json(second.url('/tenants/resources/tenants/v2/kept'), { token: auth.body.token });
    assert.equal(old.status, 200);
    assert.equal(await stop(second), 0);
  });

  test('operator credentials from GATEHOUSE_CLIENT_ID / GATEHOUSE_API_KEY; bad config fails listing every problem', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-server-'));
    dirs.push(dataDir);
    const env = {
      DATA_DIR: dataDir,
      GATEHOUSE_CLIENT_ID: 'ops',
      GATEHOUSE_API_KEY: 'ops-secret-0123456789abcdef',
      ...(await freshDatabase()),
    };
    const r = await start(env);
    assert.equal(credentialsFrom(r.stdout()), undefined);
    const ok = await json(r.url('/auth/vendor'), {
      method: 'POST',
      body: { clientId: 'ops', secret: 'ops-secret-0123456789abcdef' },
    });
    assert.equal(ok.status, 200);
    assert.equal(await stop(r), 0);

    const bad = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH, PORT: 'abc', JWT_ALGORITHM: 'HS1', GATEHOUSE_CLIENT_ID: 'x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    bad.stderr!.on('data', (d) => (err += d));
    const code = await new Promise((resolve) => bad.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(err, /PORT must be/);
    assert.match(err, /JWT_ALGORITHM must be/);
    assert.match(err, /GATEHOUSE_CLIENT_ID and GATEHOUSE_API_KEY must be set together/);
  });

  test('npm start runs the server and the agent; with no credentials configured the agent still loads a snapshot', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
    dirs.push(dataDir);
    const [port, agentPort] = [await freePort(), await freePort()];
    let out = '';
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/start.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        AGENT_PORT: String(agentPort),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        AGENT_POLL_MS: '200',
        ...(await freshDatabase()),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(proc);
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    const deadline = Date.now() + 60_000;
    let bundles = 0;
    while (Date.now() < deadline && proc.exitCode === null) {
      bundles = await fetch(`http://127.0.0.1:${agentPort}/health?bundles`).then(
        (r) => r.status,
        () => 0,
      );
      if (bundles === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(bundles, 200, `agent loaded a snapshot:\n${out}`);
    const decision = await json(`http://127.0.0.1:${agentPort}/v1/data/e10s/features/is_entitled_to_input_feature`, {
      method: 'POST',
      body: {
        input: {
          subjectContext: { tenantId: 'nobody', userId: null, permissions: [], attributes: {} },
          requestContext: { featureKey: 'none' },
        },
      },
    });
    assert.equal(decision.status, 200);
    assert.equal(decision.body.result.result, false);
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
