import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { createLogger } from '../../src/lib/log.ts';
import { createKeysService, loadKeyEncryptionKey } from '../../src/modules/keys/index.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

const A = '/identity/resources/auth/v1';
const U = '/identity/resources/users';
const SSO = '/identity/resources/sso/v1/configurations';
const TEAM_SSO = '/team/resources/sso/v1/configurations';
const SUB = '/tenants/resources/sub-tenants/v1';
const NEW_PASSWORD = 'a new horse, battery and staple 2';
const UNKNOWN_KID_WINDOW_MS = 1500;

/** The main app (address guard on, its log lines kept) and an app with private networks allowed and low limits. */
let t: TestApp;
let open: TestApp;
let vendor: string;
const logLines: string[] = [];
/** A local HTTP server on loopback (an "internal service"), counting what reaches it. */
let inside: Server;
let insidePort: number;
let closedPort: number;
let insideHits = 0;

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

const login = (app: TestApp, email: string, password = PASSWORD) =>
  app.call('POST', `${A}/user`, { body: { email, password } });
const refresh = (app: TestApp, refreshToken: string) =>
  app.call('POST', `${A}/user/token/refresh`, { body: { refreshToken } });
const change = (app: TestApp, token: string, password: string, newPassword = NEW_PASSWORD) =>
  app.call('POST', `${U}/v1/passwords/change`, { token, body: { password, newPassword } });

before(async () => {
  inside = createServer((_req, res) => {
    insideHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('internal service');
  });
  await new Promise<void>((r) => inside.listen(0, '127.0.0.1', () => r()));
  insidePort = (inside.address() as AddressInfo).port;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));

  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestApp(
    { SIGNING_KEYS_UNKNOWN_KID_RELOAD_MS: String(UNKNOWN_KID_WINDOW_MS) },
    { log: createLogger('debug', sink) },
  );
  vendor = await t.vendorToken();
  open = await startTestApp({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '3' });
});
after(async () => {
  await t?.close();
  await open?.close();
  await new Promise<void>((r) => inside?.close(() => r()));
});

describe('outbound requests an account administrator can point', () => {
  const admin = (app: TestApp, tenantId: string) =>
    app.userToken({ tenantId, permissions: ['fe.secure.read.samlConfiguration', 'fe.secure.write.samlConfiguration'] });
  const configCount = async (app: TestApp, tenantId: string) =>
    (
      await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sso_configurations WHERE tenant_id = $1', [
        tenantId,
      ])
    ).rows[0].n;

  test('metadata URLs on loopback ports and the metadata address get one 400 naming the field; nothing is fetched or stored', async () => {
    await account(t, { id: 'ssrf-acme' });
    const token = await admin(t, 'ssrf-acme');
    const urls = [
      `http://127.0.0.1:${insidePort}/`,
      `http://127.0.0.1:${closedPort}/`,
      'http://169.254.169.254/latest/meta-data/',
      `http://localhost:${insidePort}/`,
      `http://[::ffff:127.0.0.1]:${insidePort}/`,
    ];
    const answers = [];
    for (const prefix of [SSO, TEAM_SSO]) {
      for (const url of urls) {
        const r = await t.call('POST', `${prefix}/metadata-url`, { token, body: { url } });
        assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.errorCode, 'GH-20030');
        assert.match(r.body.errors[0], /body\.url/);
        answers.push(r.body);
      }
    }
    for (const a of answers)
      assert.deepEqual(a, answers[0], 'an open port, a closed port and the metadata address answer alike');
    assert.equal(await configCount(t, 'ssrf-acme'), 0, 'nothing stored');

    // The PUT twins refuse the same way and leave the configuration as it was.
    const made = await t.call('POST', SSO, {
      token,
      body: { type: 'saml', enabled: false, ssoEndpoint: 'https://idp.example/sso' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    for (const prefix of [SSO, TEAM_SSO]) {
      for (const url of urls.slice(0, 3)) {
        const r = await t.call('PUT', `${prefix}/${made.body.id}/metadata-url`, { token, body: { url } });
        assert.equal(r.status, 400);
        assert.deepEqual(r.body, answers[0]);
      }
    }
    const kept = await t.call('GET', SSO, { token });
    assert.equal(kept.body[0].ssoEndpoint, 'https://idp.example/sso');
    assert.equal(insideHits, 0, 'no request reached the loopback service');
  });

  test('an OIDC connection whose issuer is on loopback or a private address is refused; discovery re-checks at connect time', async () => {
    await account(t, { id: 'ssrf-oidc' });
    const token = await admin(t, 'ssrf-oidc');
    for (const issuer of [
      `http://127.0.0.1:${insidePort}`,
      `http://localhost:${closedPort}`,
      'https://10.0.0.8',
      'http://169.254.169.254',
    ]) {
      const r = await t.call('POST', SSO, {
        token,
        body: { type: 'oidc', enabled: true, oidcClientId: 'c', configMetadata: { issuer } },
      });
      assert.equal(r.status, 400, `${issuer}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errorCode, 'GH-20030');
      assert.match(r.body.errors[0], /configMetadata\.issuer/);
    }
    assert.equal(await configCount(t, 'ssrf-oidc'), 0);

    // A public issuer is saved; an update to loopback is refused.
    const made = await t.call('POST', SSO, {
      token,
      body: { type: 'oidc', enabled: true, oidcClientId: 'c', configMetadata: { issuer: 'https://93.184.215.14' } },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const moved = await t.call('PATCH', `${SSO}/${made.body.id}`, {
      token,
      body: { configMetadata: { issuer: `http://127.0.0.1:${insidePort}` } },
    });
    assert.equal(moved.status, 400);
    assert.equal(moved.body.errorCode, 'GH-20030');

    // An issuer that points at loopback anyway (as if its DNS changed after it was saved): the sign-in's discovery is refused.
    await t.db.query('UPDATE sso_configurations SET oidc_issuer = $2 WHERE id = $1', [
      made.body.id,
      `http://localhost:${insidePort}`,
    ]);
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: ['https://app.example/cb'] },
    });
    const pre = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email: 'x@ssrf.test', tenantId: 'ssrf-oidc', redirectUri: 'https://app.example/cb' },
    });
    assert.equal(pre.status, 502, JSON.stringify(pre.body));
    assert.equal(pre.body.errorCode, 'GH-66015');
    assert.equal(insideHits, 0, 'no request reached the loopback service');
  });

  test('with private networks allowed, fetch failures answer alike whether the port is open or closed', async () => {
    await account(open, { id: 'ssrf-open' });
    const token = await admin(open, 'ssrf-open');
    const hitsBefore = insideHits;
    const a = await open.call('POST', `${SSO}/metadata-url`, {
      token,
      body: { url: `http://127.0.0.1:${insidePort}/` },
    });
    const b = await open.call('POST', `${SSO}/metadata-url`, {
      token,
      body: { url: `http://127.0.0.1:${closedPort}/` },
    });
    assert.equal(a.status, 502, JSON.stringify(a.body));
    assert.deepEqual(a.body, b.body);
    assert.equal(insideHits, hitsBefore + 1, 'the allowed request was made');
    assert.equal(await configCount(open, 'ssrf-open'), 0);
  });
});

describe('password change', () => {
  test('ends the other sessions and keeps the one that changed it', async () => {
    await account(t, { id: 'pw-acme' });
    await user(t, 'pw-acme', { email: 'ends@pw.test' });
    const mine = await login(t, 'ends@pw.test');
    const other = await login(t, 'ends@pw.test');
    assert.equal(mine.status, 200);
    assert.equal(other.status, 200);
    const r = await change(t, mine.body.accessToken, PASSWORD);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal((await refresh(t, other.body.refreshToken)).status, 401, 'the other session ended');
    const kept = await refresh(t, mine.body.refreshToken);
    assert.equal(kept.status, 201, 'the changing session goes on');
    assert.equal(claims(kept.body.accessToken).sid, claims(mine.body.accessToken).sid);
    const { rows } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE event_key = 'session.revoked' AND entity_id = $1",
      [claims(other.body.accessToken).sid],
    );
    assert.equal(rows[0].n, 1, 'session.revoked is emitted for the ended session');
  });

  test('wrong current passwords count towards the lockout policy', async () => {
    await account(t, { id: 'pw-lock' });
    const { id } = await user(t, 'pw-lock', { email: 'guess@pw.test' });
    const s = await login(t, 'guess@pw.test');
    for (let i = 0; i < 5; i++) {
      const r = await change(t, s.body.accessToken, `wrong guess ${i}`);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.errorCode, 'GH-42008');
    }
    const rec = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.equal(rec.body.isLocked, true, 'five wrong guesses lock the user (the default policy)');
    const signIn = await login(t, 'guess@pw.test');
    assert.equal(signIn.status, 403);
    assert.equal(signIn.body.errorCode, 'GH-43005');
    const right = await change(t, s.body.accessToken, PASSWORD);
    assert.equal(right.status, 403, 'a locked user cannot change the password either');
    assert.equal((await login(t, 'guess@pw.test', NEW_PASSWORD)).status, 403, 'nothing changed');
  });

  test('current-password checks share the sign-in rate limit per identifier', async () => {
    await account(open, { id: 'pw-rate' });
    await user(open, 'pw-rate', { email: 'rate@pw.test' });
    const s = await login(open, 'rate@pw.test');
    assert.equal(s.status, 200);
    // The limit counts failures (3 here): the successful sign-in did not count, the third wrong guess reaches it.
    assert.equal((await change(open, s.body.accessToken, 'wrong 1')).status, 400);
    assert.equal((await change(open, s.body.accessToken, 'wrong 2')).status, 400);
    assert.equal((await change(open, s.body.accessToken, 'wrong 3')).status, 400);
    const limited = await change(open, s.body.accessToken, 'wrong 4');
    assert.equal(limited.status, 429, JSON.stringify(limited.body));
    assert.ok(limited.headers['retry-after']);
    assert.equal(
      (await change(open, s.body.accessToken, PASSWORD)).status,
      429,
      'the right one too, until the window ends',
    );
    assert.equal((await login(open, 'rate@pw.test')).status, 429, 'the sign-in shares the counter');
  });
});

describe('removed account ids', () => {
  test('a user cannot create a sub-account with a removed account id; the environment still reactivates it', async () => {
    await account(t, { id: 'ra-parent' });
    const created = await t.call('POST', SUB, {
      token: vendor,
      body: { tenantId: 'ra-old', name: 'Old', parentTenantId: 'ra-parent' },
    });
    assert.equal(created.status, 201);
    await user(t, 'ra-old', { email: 'member@ra.test' });
    assert.equal((await t.call('DELETE', `${SUB}/ra-old`, { token: vendor })).status, 200);
    const before = await t.db.query<{ deleted_at: Date | null }>(
      "SELECT deleted_at FROM tenants WHERE tenant_id = 'ra-old'",
    );
    assert.ok(before.rows[0].deleted_at);

    const u = await t.userToken({
      tenantId: 'ra-parent',
      permissions: ['fe.account-hierarchy.read.subaccount', 'fe.account-hierarchy.write.subaccount'],
    });
    const reuse = await t.call('POST', SUB, {
      token: u,
      body: { tenantId: 'ra-old', name: 'Mine now', parentTenantId: 'ra-parent' },
    });
    assert.equal(reuse.status, 409, JSON.stringify(reuse.body));
    assert.equal(reuse.body.errorCode, 'GH-30002');
    const live = await t.call('POST', SUB, {
      token: u,
      body: { tenantId: 'ra-parent', name: 'x', parentTenantId: 'ra-parent' },
    });
    assert.equal(live.status, 409, 'a live id');
    const after = await t.db.query<{ deleted_at: Date | null; name: string }>(
      "SELECT deleted_at, name FROM tenants WHERE tenant_id = 'ra-old'",
    );
    assert.ok(after.rows[0].deleted_at, 'still removed');
    assert.equal(after.rows[0].name, 'Old');
    assert.equal(
      (await t.call('POST', SUB, { token: u, body: { tenantId: 'ra-new', name: 'New', parentTenantId: 'ra-parent' } }))
        .status,
      201,
    );

    const again = await t.call('POST', SUB, {
      token: vendor,
      body: { tenantId: 'ra-old', name: 'Back', parentTenantId: 'ra-parent' },
    });
    assert.equal(again.status, 201, 'the environment reactivates the id');
    assert.equal(again.body.name, 'Back');
  });
});

describe('access log', () => {
  test('secret query values are redacted; the path and other parameters stay', async () => {
    const secrets = [
      'mfaToken=secretvalue1',
      'token=secretvalue2',
      'code=secretvalue3',
      'state=secretvalue4',
      'refresh_token=secretvalue5',
      'SAMLResponse=secretvalue6',
      'RelayState=secretvalue7',
      'id_token=secretvalue8',
      'CLIENT_SECRET=secretvalue9',
      'code_verifier=secretvalue10',
      'password=secretvalue11',
      'nonce=secretvalue12',
      'otp=secretvalue13',
      'access_token=secretvalue14',
      'refreshToken=secretvalue15',
    ];
    const url = `/identity/resources/users/v2/me?${secrets.join('&')}&page=2`;
    logLines.length = 0;
    await t.call('GET', url);
    await t.call('GET', `/frontegg${url}`);
    await new Promise((r) => setTimeout(r, 50));
    const text = logLines.join('\n');
    assert.ok(
      text.includes('/identity/resources/users/v2/me?mfaToken=[REDACTED]&token=[REDACTED]'),
      text.slice(0, 2000),
    );
    assert.ok(text.includes('page=2'));
    assert.ok(!/secretvalue/.test(text), 'no secret value is written');
  });
});

describe('unknown key ids', () => {
  test('forged kids cost at most one key reload per window; a key another instance rotated in is accepted after it', async () => {
    await account(t, { id: 'kid-acme' });
    await user(t, 'kid-acme', { email: 'kid@acme.test' });
    const real = await login(t, 'kid@acme.test');
    const { privateKey } = await generateKeyPair('RS256');
    const forge = (kid: string) =>
      new SignJWT({ ...claims(real.body.accessToken) }).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
    const tokens = await Promise.all(Array.from({ length: 40 }, () => forge(randomUUID())));

    const reloadsBefore = t.ctx.keys.reloads;
    const started = Date.now();
    const answers = await Promise.all(tokens.map((token) => t.call('GET', `${U}/v2/me`, { token })));
    for (const a of answers) assert.equal(a.status, 401);
    for (const token of tokens.slice(0, 10)) assert.equal((await t.call('GET', `${U}/v2/me`, { token })).status, 401);
    const windows = 1 + Math.floor((Date.now() - started) / UNKNOWN_KID_WINDOW_MS);
    assert.ok(
      t.ctx.keys.reloads - reloadsBefore <= windows,
      `${t.ctx.keys.reloads - reloadsBefore} reloads in ${windows} window(s)`,
    );

    // Another instance over the same database rotates; its token is accepted once this instance's window allows a reload.
    const cfg = t.ctx.config;
    const kek = loadKeyEncryptionKey(cfg.encryptionKey, cfg.dataDir);
    const other = createKeysService({
      db: t.db,
      kek,
      algorithm: cfg.jwtAlgorithm,
      issuer: cfg.publicUrl,
      graceSeconds: 86400,
    });
    await other.init();
    await other.rotate();
    const { iat: _iat, exp: _exp, iss: _iss, ...rest } = claims(real.body.accessToken);
    const rotated = await other.sign(rest, 300);
    await new Promise((r) => setTimeout(r, UNKNOWN_KID_WINDOW_MS + 100));
    const ok = await t.call('GET', `${U}/v2/me`, { token: rotated });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(
      (await t.call('GET', `${U}/v2/me`, { token: real.body.accessToken })).status,
      200,
      'the old key still verifies',
    );
  });
});
