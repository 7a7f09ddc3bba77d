import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';
import { ENV, waitFor } from '../helpers/user-migration.ts';

const M = '/identity/resources/migrations/v1';
const dir = mkdtempSync(join(tmpdir(), 'gh-idp-'));
let server: Server;
let domain: string;
let t: TestApp;
const calls: string[] = [];

/**
 * 2,500 users (past Auth0's 1,000-result window of GET /api/v2/users): 2,400 with an account in
 * app_metadata.accountId, 100 without. The server speaks Auth0's user-export job and checkpoint pagination of a
 * role's members (rol_1: every 15th user from the 4th, more than one page).
 */
const USERS = Array.from({ length: 2500 }, (_, i) => ({
  user_id: `auth0|${i}`,
  email: `idp-${i}@auth0.test`,
  email_verified: i % 2 === 0,
  name: `Idp ${i}`,
  app_metadata: i < 2400 ? { accountId: i % 3 ? 'idp-a' : 'idp-b' } : {},
  user_metadata: { n: i },
  logins_count: i,
}));
const ROLE_MEMBERS = USERS.filter((_, i) => i % 15 === 3).map((u) => ({ user_id: u.user_id, email: u.email }));
const jobs = new Map<string, { fields: string[]; polls: number }>();

before(async () => {
  // A self-signed certificate for 127.0.0.1 made by openssl; the app trusts it through OUTBOUND_CA_FILE only.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  server = createServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (req, res) => {
      const url = new URL(req.url!, 'https://x');
      calls.push(`${req.method} ${url.pathname}${url.search}`);
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && url.pathname === '/oauth/token') {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          const b = JSON.parse(raw);
          if (b.grant_type !== 'client_credentials' || b.client_id !== 'cid' || b.client_secret !== 'csecret')
            return send(401, { error: 'access_denied' });
          send(200, { access_token: 'mgmt-token', token_type: 'Bearer', expires_in: 86400 });
        });
        return;
      }
      const file = /^\/exports\/(job_\d+)\.json\.gz$/.exec(url.pathname);
      if (req.method === 'GET' && file && jobs.has(file[1])) {
        // A pre-signed link: a request carrying another credential is refused (as S3 does).
        if (req.headers.authorization) return send(400, { message: 'Only one auth mechanism allowed' });
        const { fields } = jobs.get(file[1])!;
        const ndjson = USERS.map((u) =>
          JSON.stringify(Object.fromEntries(Object.entries(u).filter(([k]) => fields.includes(k)))),
        ).join('\n');
        return res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(`${ndjson}\n`));
      }
      if (req.headers.authorization !== 'Bearer mgmt-token') return send(401, { message: 'bad token' });
      const page = Number(url.searchParams.get('page') ?? 0);
      const per = Number(url.searchParams.get('per_page') ?? 50);
      const paged = (list: unknown[], field: string) =>
        send(200, {
          start: page * per,
          limit: per,
          total: list.length,
          [field]: list.slice(page * per, page * per + per),
        });
      if (url.pathname === '/api/v2/users') {
        // Auth0's window: offset paging ends at the 1,000th result.
        if ((page + 1) * per > 1000)
          return send(400, {
            statusCode: 400,
            error: 'Bad Request',
            message: `Requesting page ${page} exceeds the allowed maximum of 1000 records`,
          });
        return paged(USERS, 'users');
      }
      if (req.method === 'POST' && url.pathname === '/api/v2/jobs/users-exports') {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          const b = JSON.parse(raw);
          if (b.format !== 'json') return send(400, { message: 'only json in this test server' });
          const id = `job_${jobs.size + 1}`;
          jobs.set(id, { fields: b.fields.map((f: { name: string }) => f.name), polls: 0 });
          send(201, {
            type: 'users_export',
            status: 'pending',
            format: 'json',
            fields: b.fields,
            id,
            created_at: new Date().toISOString(),
          });
        });
        return;
      }
      const job = /^\/api\/v2\/jobs\/(job_\d+)$/.exec(url.pathname);
      if (job && jobs.has(job[1])) {
        const j = jobs.get(job[1])!;
        // Processing at the first look, completed at the next: the client must poll.
        if (j.polls++ === 0)
          return send(200, { type: 'users_export', status: 'processing', id: job[1], percentage_done: 40 });
        return send(200, {
          type: 'users_export',
          status: 'completed',
          id: job[1],
          location: `${domain}/exports/${job[1]}.json.gz`,
        });
      }
      if (url.pathname === '/api/v2/roles') return paged([{ id: 'rol_1', name: 'idp-admin' }], 'roles');
      if (url.pathname === '/api/v2/roles/rol_1/users') {
        const take = Number(url.searchParams.get('take') ?? 50);
        const from = Number(url.searchParams.get('from') ?? 0);
        const users = ROLE_MEMBERS.slice(from, from + take);
        return send(200, from + take < ROLE_MEMBERS.length ? { users, next: String(from + take) } : { users });
      }
      send(404, { message: 'not found' });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  domain = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  t = await startTestApp({ ...ENV, OUTBOUND_CA_FILE: join(dir, 'cert.pem'), JOB_CHUNK_SIZE: '50' });
  const vendor = await t.vendorToken();
  for (const tenantId of ['idp-a', 'idp-b']) await account(t, { id: tenantId });
  assert.equal(
    (
      await t.call('POST', '/identity/resources/roles/v1', {
        token: vendor,
        body: [{ key: 'idp-admin', name: 'IdP admin', level: 1 }],
      })
    ).status,
    201,
  );
});
after(async () => {
  await t?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = async (provider: string, body: Record<string, unknown>) =>
  t.call('POST', `${M}/${provider}`, { token: await t.vendorToken(), body });

describe('migration from a third-party identity provider (auth0)', () => {
  test('2,500 users through the export job (past the 1,000-result window); each lands in the account of its app_metadata field', async () => {
    const r = await start('auth0', { domain, clientId: 'cid', secret: 'csecret', tenantIdFieldName: 'accountId' });
    assert.equal(r.status, 201, JSON.stringify(r.body)); // routes.md: 201 (the job runs in the background all the same)
    assert.deepEqual(Object.keys(r.body), ['migrationId']);
    const s = await waitFor(t, r.body.migrationId, (x) => x.state === 'completed' || x.state === 'failed', 180_000);
    assert.equal(s.state, 'completed', JSON.stringify(s).slice(0, 300));
    assert.equal(s.total, 2500);
    assert.equal(s.succeeded, 2400);
    assert.equal(s.failed, 100);
    assert.ok(s.errors.every((e: any) => /tenantId/.test(e.message)));
    assert.ok(calls.includes('POST /api/v2/jobs/users-exports'), 'an export job');
    assert.ok(calls.filter((c) => c === 'GET /api/v2/jobs/job_1').length >= 2, 'polled until completed');
    assert.ok(calls.includes('GET /exports/job_1.json.gz'), 'the file downloaded');
    assert.ok(!calls.some((c) => c.startsWith('GET /api/v2/users')), 'no offset paging of users');
    assert.ok(
      calls.some((c) => c.startsWith('GET /api/v2/roles/rol_1/users?take=100&from=100')),
      'role members by checkpoint',
    );
    const last = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users WHERE email IN ('idp-2399@auth0.test', 'idp-1001@auth0.test')`,
    );
    assert.equal(last.rows[0].n, 2, 'users past the 1,000th are there');
    const admins = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE r.key = 'idp-admin'`,
    );
    assert.equal(
      admins.rows[0].n,
      ROLE_MEMBERS.filter((m) => Number(m.user_id.split('|')[1]) < 2400).length,
      'every member of the role',
    );
    const { rows } = await t.db.query<any>(
      `SELECT u.email, u.provider, u.verified, u.must_reset_password, ut.tenant_id FROM users u JOIN user_tenants ut ON ut.user_id = u.id WHERE u.email IN ('idp-3@auth0.test', 'idp-4@auth0.test') ORDER BY u.email`,
    );
    assert.deepEqual(rows, [
      { email: 'idp-3@auth0.test', provider: 'local', verified: false, must_reset_password: true, tenant_id: 'idp-b' },
      { email: 'idp-4@auth0.test', provider: 'local', verified: true, must_reset_password: true, tenant_id: 'idp-a' },
    ]);
    const roles = await t.db.query<any>(
      `SELECT r.key FROM user_roles ur JOIN roles r ON r.id = ur.role_id JOIN users u ON u.id = ur.user_id WHERE u.email = 'idp-3@auth0.test'`,
    );
    assert.deepEqual(
      roles.rows.map((x) => x.key),
      ['idp-admin'],
    );
    // No password hash is readable through the management API: sign-in answers the reset flow.
    const login = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { email: 'idp-4@auth0.test', password: 'anything-at-all' },
    });
    assert.ok(login.body.resetPasswordToken);
  });

  test('user_metadata when isTenantIdOnUserMetadata; bad credentials and an unreachable provider fail with a reason', async () => {
    const bad = await start('auth0', { domain, clientId: 'cid', secret: 'wrong', tenantIdFieldName: 'accountId' });
    assert.equal(bad.status, 201, 'credentials are tried by the job, not at the request');
    const failed = await waitFor(t, bad.body.migrationId, (x) => x.state === 'failed', 30_000);
    assert.match(
      failed.failureReason,
      /auth0 migration failed: POST https:\/\/127\.0\.0\.1:\d+\/oauth\/token answered 401/,
    );
    const down = await start('auth0', {
      domain: 'https://127.0.0.1:1',
      clientId: 'cid',
      secret: 'csecret',
      tenantIdFieldName: 'accountId',
    });
    const f2 = await waitFor(t, down.body.migrationId, (x) => x.state === 'failed', 30_000);
    assert.match(f2.failureReason, /cannot reach https:\/\/127\.0\.0\.1:1/);
    const meta = await start('auth0', {
      domain,
      clientId: 'cid',
      secret: 'csecret',
      tenantIdFieldName: 'accountId',
      isTenantIdOnUserMetadata: true,
    });
    const s = await waitFor(t, meta.body.migrationId, (x) => x.state === 'completed', 180_000);
    assert.equal(s.succeeded, 0, 'user_metadata holds no accountId: every user is an error entry');
    assert.equal(s.failed, 2500);
  });

  test('bad input: domain without https://, unknown provider, missing field: 400 and no migration', async () => {
    const count = async () =>
      (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM migrations WHERE kind = 'users'")).rows[0].n;
    const before = await count();
    const http = await start('auth0', {
      domain: 'http://127.0.0.1',
      clientId: 'cid',
      secret: 's',
      tenantIdFieldName: 'accountId',
    });
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
