import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  cleanUpProcesses,
  freshDatabase,
  type Running,
  startServer,
  stop as stopProc,
  tempDir,
} from '../helpers/processes.ts';

/** The runtime contract, end to end: a real `src/server.ts` process, started, stopped and restarted. */

const start = startServer;
const stop = (r: Running) => stopProc(r.proc);
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
  after(cleanUpProcesses);

  test('first start generates and prints credentials once; data survives a restart; SIGTERM exits 0', async () => {
    const dataDir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-server-')));
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
    const dataDir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-server-')));
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
});
