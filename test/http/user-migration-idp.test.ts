import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { ENV, waitFor } from '../helpers/user-migration.ts';

const M = '/identity/resources/migrations/v1';
const dir = mkdtempSync(join(tmpdir(), 'gh-idp-'));
let server: Server;
let domain: string;
let t: TestApp;
const calls: string[] = [];

/** 250 users over three pages: 240 with an account in app_metadata.accountId, 10 without; roles through /api/v2/roles. */
const USERS = Array.from({ length: 250 }, (_, i) => ({
  user_id: `auth0|${i}`,
  email: `idp-${i}@auth0.test`,
  email_verified: i % 2 === 0,
  name: `Idp ${i}`,
  app_metadata: i < 240 ? { accountId: i % 3 ? 'idp-a' : 'idp-b' } : {},
  user_metadata: { n: i },
}));

before(async () => {
  // A self-signed certificate for 127.0.0.1 made by openssl; the app trusts it through OUTBOUND_CA_FILE only.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    const url = new URL(req.url!, 'https://x');
    calls.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const b = JSON.parse(raw);
        if (b.grant_type !== 'client_credentials' || b.client_id !== 'cid' || b.client_secret !== 'csecret') return send(401, { error: 'access_denied' });
        send(200, { access_token: 'mgmt-token', token_type: 'Bearer', expires_in: 86400 });
      });
      return;
    }
    if (req.headers.authorization !== 'Bearer mgmt-token') return send(401, { message: 'bad token' });
    const page = Number(url.searchParams.get('page') ?? 0);
    const per = Number(url.searchParams.get('per_page') ?? 50);
    const paged = (list: unknown[], field: string) => send(200, { start: page * per, limit: per, total: list.length, [field]: list.slice(page * per, page * per + per) });
    if (url.pathname === '/api/v2/users') return paged(USERS, 'users');
    if (url.pathname === '/api/v2/roles') return paged([{ id: 'rol_1', name: 'idp-admin' }], 'roles');
    if (url.pathname === '/api/v2/roles/rol_1/users') return paged([{ user_id: 'auth0|3' }], 'users');
    send(404, { message: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  domain = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  t = await startTestApp({ ...ENV, OUTBOUND_CA_FILE: join(dir, 'cert.pem'), JOB_CHUNK_SIZE: '50' });
  const vendor = await t.vendorToken();
  for (const tenantId of ['idp-a', 'idp-b']) assert.equal((await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId, name: tenantId } })).status, 201);
  assert.equal((await t.call('POST', '/identity/resources/roles/v1', { token: vendor, body: [{ key: 'idp-admin', name: 'IdP admin', level: 1 }] })).status, 201);
});
after(async () => {
  await t?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = async (provider: string, body: Record<string, unknown>) => t.call('POST', `${M}/${provider}`, { token: await t.vendorToken(), body });

describe('migration from a third-party identity provider (auth0)', () => {
  test('pages through users and roles; each lands in the account of its app_metadata field, provider local', async () => {
    const r = await start('auth0', { domain, clientId: 'cid', secret: 'csecret', tenantIdFieldName: 'accountId' });
    assert.equal(r.status, 201, JSON.stringify(r.body)); // routes.md: 201 (the job runs in the background all the same)
    assert.deepEqual(Object.keys(r.body), ['migrationId']);
    const s = await waitFor(t, r.body.migrationId, (x) => x.state === 'completed' || x.state === 'failed', 30_000);
    assert.equal(s.state, 'completed', JSON.stringify(s).slice(0, 300));
    assert.equal(s.total, 250);
    assert.equal(s.succeeded, 240);
    assert.equal(s.failed, 10);
    assert.ok(s.errors.every((e: any) => /tenantId/.test(e.message)));
    assert.ok(calls.some((c) => c.includes('/api/v2/users?page=2')), 'paged');
    const { rows } = await t.db.query<any>(`SELECT u.email, u.provider, u.verified, u.must_reset_password, ut.tenant_id FROM users u JOIN user_tenants ut ON ut.user_id = u.id WHERE u.email IN ('idp-3@auth0.test', 'idp-4@auth0.test') ORDER BY u.email`);
    assert.deepEqual(rows, [
      { email: 'idp-3@auth0.test', provider: 'local', verified: false, must_reset_password: true, tenant_id: 'idp-b' },
      { email: 'idp-4@auth0.test', provider: 'local', verified: true, must_reset_password: true, tenant_id: 'idp-a' },
    ]);
    const roles = await t.db.query<any>(`SELECT r.key FROM user_roles ur JOIN roles r ON r.id = ur.role_id JOIN users u ON u.id = ur.user_id WHERE u.email = 'idp-3@auth0.test'`);
    assert.deepEqual(roles.rows.map((x) => x.key), ['idp-admin']);
    // No password hash is readable through the management API: sign-in answers the reset flow.
    const login = await t.call('POST', '/identity/resources/auth/v1/user', { body: { email: 'idp-4@auth0.test', password: 'anything-at-all' } });
    assert.ok(login.body.resetPasswordToken);
  });

  test('user_metadata when isTenantIdOnUserMetadata; bad credentials and an unreachable provider fail with a reason', async () => {
    const bad = await start('auth0', { domain, clientId: 'cid', secret: 'wrong', tenantIdFieldName: 'accountId' });
    assert.equal(bad.status, 201, 'credentials are tried by the job, not at the request');
    const failed = await waitFor(t, bad.body.migrationId, (x) => x.state === 'failed', 30_000);
    assert.match(failed.failureReason, /auth0 migration failed: POST https:\/\/127\.0\.0\.1:\d+\/oauth\/token answered 401/);
    const down = await start('auth0', { domain: 'https://127.0.0.1:1', clientId: 'cid', secret: 'csecret', tenantIdFieldName: 'accountId' });
    const f2 = await waitFor(t, down.body.migrationId, (x) => x.state === 'failed', 30_000);
    assert.match(f2.failureReason, /cannot reach https:\/\/127\.0\.0\.1:1/);
    const meta = await start('auth0', { domain, clientId: 'cid', secret: 'csecret', tenantIdFieldName: 'accountId', isTenantIdOnUserMetadata: true });
    const s = await waitFor(t, meta.body.migrationId, (x) => x.state === 'completed', 30_000);
    assert.equal(s.succeeded, 0, 'user_metadata holds no accountId: every user is an error entry');
    assert.equal(s.failed, 250);
  });

  test('bad input: domain without https://, unknown provider, missing field: 400 and no migration', async () => {
    const count = async () => (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM migrations WHERE kind = 'users'")).rows[0].n;
    const before = await count();
    const http = await start('auth0', { domain: 'http://127.0.0.1', clientId: 'cid', secret: 's', tenantIdFieldName: 'accountId' });
    assert.equal(http.status, 400);
    assert.match(http.body.errors.join(' '), /domain/);
    const unknown = await start('okta', { domain, clientId: 'cid', secret: 's', tenantIdFieldName: 'accountId' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errorCode, 'GH-44002');
    const missing = await start('auth0', { domain, clientId: 'cid', secret: 's' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.errors[0], /tenantIdFieldName is required/);
    assert.equal(await count(), before, 'a refused request starts no migration');
  });
});
