import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const A = '/identity/resources/auth/v1';
const APP_DONE = 'https://app.example.test/signed-out';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const cookieOf = (r: { headers: Record<string, unknown> }) =>
  /gh_refresh=([^;]*)/.exec(String(r.headers['set-cookie']))?.[1] ?? '';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function wiredCall(
  method: 'GET' | 'POST',
  url: string,
  o: { payload?: string; headers?: Record<string, string> } = {},
) {
  const res = await t.app.inject({ method, url, payload: o.payload, headers: o.headers });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'oa' });
  await t.call('POST', '/identity/resources/configurations/v1', {
    token: vendor,
    body: { allowedRedirectUrls: [APP_DONE] },
  });
});
after(async () => t?.close());

describe('discovery', () => {
  test("both addresses answer the provider metadata: issuer is the tokens' iss, endpoints, only the grants built", async () => {
    await user(t, 'oa', { email: 'disc@oa.test' });
    const { accessToken } = await signedIn(t, { email: 'disc@oa.test' });
    for (const url of ['/oauth/.well-known/openid-configuration', '/.well-known/openid-configuration']) {
      const r = await t.call('GET', url);
      assert.equal(r.status, 200);
      assert.match(String(r.headers['cache-control']), /public/);
      const d = r.body;
      assert.equal(d.issuer, claims(accessToken).iss);
      assert.equal(d.jwks_uri, `${d.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`);
      assert.equal(d.token_endpoint, `${d.issuer.replace(/\/+$/, '')}/oauth/token`);
      assert.equal(d.end_session_endpoint, `${d.issuer.replace(/\/+$/, '')}/oauth/logout`);
      assert.ok(d.grant_types_supported.includes('refresh_token'));
      assert.deepEqual(d.id_token_signing_alg_values_supported, [
        JSON.parse(Buffer.from(accessToken.split('.')[0], 'base64url').toString()).alg,
      ]);
      assert.deepEqual(d.subject_types_supported, ['public']);
      // The OpenID provider adds the code flow: code only (no implicit), PKCE with S256 only.
      assert.deepEqual(d.response_types_supported, ['code']);
      assert.deepEqual(d.code_challenge_methods_supported, ['S256']);
      assert.equal(d.authorization_endpoint, `${d.issuer.replace(/\/+$/, '')}/oidc/auth`);
      for (const c of ['sub', 'email', 'roles', 'permissions', 'tenantId', 'sid'])
        assert.ok(d.claims_supported.includes(c), c);
    }
    const jwks = await t.call('GET', '/.well-known/jwks.json');
    assert.equal(jwks.status, 200);
    const w = await wiredCall('GET', '/oauth/.well-known/openid-configuration');
    assert.deepEqual(w.body.grant_types_supported, ['authorization_code', 'refresh_token', 'client_credentials']);
    assert.deepEqual(w.body.token_endpoint_auth_methods_supported, [
      'none',
      'client_secret_basic',
      'client_secret_post',
    ]);
  });
});

describe('POST /oauth/token: refresh_token', () => {
  test('a form post rotates the token; replaying the old one is invalid_grant and revokes the session', async () => {
    await user(t, 'oa', { email: 'rot@oa.test' });
    const s = await signedIn(t, { email: 'rot@oa.test' });
    const r = await t.call('POST', '/oauth/token', {
      raw: form({ grant_type: 'refresh_token', refresh_token: s.refreshToken }),
      headers: FORM,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.body.token_type, 'Bearer');
    assert.equal(r.body.expires_in, 300);
    assert.notEqual(r.body.refresh_token, s.refreshToken);
    assert.equal(claims(r.body.access_token).sid, claims(s.accessToken).sid);
    assert.equal(r.headers['set-cookie'], undefined, 'a body token sets no cookie');

    const replay = await t.call('POST', '/oauth/token', {
      body: { grant_type: 'refresh_token', refresh_token: s.refreshToken },
    });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.ok(replay.body.error_description);
    assert.equal(replay.body.errors, undefined);
    // The replay revoked the session: the token rotated above is dead too (as with the refresh route).
    const after = await t.call('POST', '/oauth/token', {
      body: { grant_type: 'refresh_token', refresh_token: r.body.refresh_token },
    });
    assert.equal(after.status, 400);
    assert.equal(after.body.error, 'invalid_grant');
    const viaRoute = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: r.body.refresh_token } });
    assert.equal(viaRoute.status, 401);
  });

  test('the gh_refresh cookie is accepted (JSON body) and the rotated token is set in it', async () => {
    await user(t, 'oa', { email: 'cookie@oa.test' });
    const s = await signedIn(t, { email: 'cookie@oa.test' });
    const r = await t.call('POST', '/oauth/token', {
      body: { grant_type: 'refresh_token' },
      headers: { cookie: `gh_refresh=${s.cookie}` },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(decodeURIComponent(cookieOf(r)), r.body.refresh_token);
  });

  test('RFC 6749 errors: missing grant, unsupported grant, missing token, unknown token, bad JSON', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ body: {} }, 400, 'invalid_request'],
      [{ body: { grant_type: 'password', username: 'x', password: 'y' } }, 400, 'unsupported_grant_type'],
      [{ body: { grant_type: 'refresh_token' } }, 400, 'invalid_request'],
      [{ body: { grant_type: 'refresh_token', refresh_token: 'nope' } }, 400, 'invalid_grant'],
      [{ body: { grant_type: 7 } }, 400, 'invalid_request'],
      [{ raw: '{"grant_type":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_request'],
    ];
    for (const [o, status, error] of cases) {
      const r = await t.call('POST', '/oauth/token', o);
      assert.equal(r.status, status, JSON.stringify(o));
      assert.equal(r.body.error, error, JSON.stringify(r.body));
      assert.equal(typeof r.body.error_description, 'string');
      assert.equal(r.body.errorCode, undefined);
      assert.equal(r.headers['cache-control'], 'no-store');
    }
  });
});

describe('POST /oauth/token: client_credentials', () => {
  let clientId = '';
  let secret = '';
  before(async () => {
    const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
    const readOnly = roles.body.find((x: { key: string }) => x.key === 'read-only').id;
    const r = await t.call('POST', '/identity/resources/tenants/api-tokens/v1', {
      token: vendor,
      body: { description: 'oauth', roleIds: [readOnly] },
      headers: { 'gatehouse-tenant-id': 'oa' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ({ clientId, secret } = r.body);
  });

  test('client_secret_post and client_secret_basic exchange the API token', async () => {
    const post = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
      headers: FORM,
    });
    assert.equal(post.status, 200, JSON.stringify(post.body));
    assert.equal(post.body.token_type, 'Bearer');
    assert.equal(post.body.refresh_token, undefined);
    assert.equal(claims(post.body.access_token).type, 'tenantApiToken');
    assert.equal(claims(post.body.access_token).tenantId, 'oa');
    const users = await t.call('GET', '/identity/resources/users/v2', { token: post.body.access_token });
    assert.equal(users.status, 200, JSON.stringify(users.body));
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
    const b = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials' }),
      headers: { ...FORM, authorization: `Basic ${basic}` },
    });
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(claims(b.body.access_token).sub, clientId);
  });

  test('an exchange writes no refresh token; every issued token has its audit entry, stored before the answer', async () => {
    const stored = async () =>
      (
        await t.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM api_token_refresh_tokens WHERE api_token_id = $1',
          [clientId],
        )
      ).rows[0].n;
    const before = await stored();
    const since = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      const r = await wiredCall('POST', '/oauth/token', {
        payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
        headers: FORM,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.refresh_token, undefined);
    }
    assert.equal(await stored(), before, 'no refresh token row per exchange');
    const log = await t.call(
      'GET',
      `/audits?from=${encodeURIComponent(since)}&sortDirection=asc&count=100&action=oauth.token.created`,
      { token: vendor },
    );
    assert.equal(log.status, 200, JSON.stringify(log.body));
    assert.deepEqual(
      log.body.data.map((e: { outcome: string; data: { path: string; statusCode: number } }) => [
        e.outcome,
        e.data.path,
        e.data.statusCode,
      ]),
      [
        ['success', '/oauth/token', 200],
        ['success', '/oauth/token', 200],
        ['success', '/oauth/token', 200],
      ],
    );
    // The vendor-compatible exchange keeps its refresh token.
    const v2 = await t.call('POST', '/identity/resources/auth/v2/api-token', { body: { clientId, secret } });
    assert.equal(v2.status, 200, JSON.stringify(v2.body));
    assert.equal(typeof v2.body.refresh_token, 'string');
    assert.equal(await stored(), before + 1);
  });

  test('bad client: 401 invalid_client (WWW-Authenticate with Basic); missing secret: invalid_request', async () => {
    const post = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' }),
      headers: FORM,
    });
    assert.equal(post.status, 401);
    assert.equal(post.body.error, 'invalid_client');
    assert.equal(post.headers['www-authenticate'], undefined);
    const basic = Buffer.from(`${clientId}:wrong`).toString('base64');
    const b = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials' }),
      headers: { ...FORM, authorization: `Basic ${basic}` },
    });
    assert.equal(b.status, 401);
    assert.equal(b.body.error, 'invalid_client');
    assert.match(String(b.headers['www-authenticate']), /^Basic/);
    const none = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials' }),
      headers: FORM,
    });
    assert.equal(none.status, 401);
    assert.equal(none.body.error, 'invalid_client');
    const half = await wiredCall('POST', '/oauth/token', {
      payload: form({ grant_type: 'client_credentials', client_id: clientId }),
      headers: FORM,
    });
    assert.equal(half.status, 400);
    assert.equal(half.body.error, 'invalid_request');
  });
});

describe('POST /oauth/authorize/silent', () => {
  test('with the cookie: the login answer and a rotated cookie; without or with a dead one: 401 login_required', async () => {
    await user(t, 'oa', { email: 'silent@oa.test' });
    const s = await signedIn(t, { email: 'silent@oa.test' });
    const r = await t.call('POST', '/oauth/authorize/silent', { headers: { cookie: `gh_refresh=${s.cookie}` } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaRequired, false);
    assert.equal(claims(r.body.accessToken).sid, claims(s.accessToken).sid);
    assert.equal(decodeURIComponent(cookieOf(r)), r.body.refreshToken);
    assert.notEqual(r.body.refreshToken, s.refreshToken);

    const none = await t.call('POST', '/oauth/authorize/silent');
    assert.equal(none.status, 401);
    assert.equal(none.body.error, 'login_required');
    const dead = await t.call('POST', '/oauth/authorize/silent', { headers: { cookie: 'gh_refresh=unknown' } });
    assert.equal(dead.status, 401);
    assert.equal(dead.body.error, 'login_required');
  });
});

describe('GET /oauth/logout', () => {
  test('an allowed post_logout_redirect_uri: session ended, cookie cleared, 302 with state', async () => {
    await user(t, 'oa', { email: 'out@oa.test' });
    const s = await signedIn(t, { email: 'out@oa.test' });
    const r = await t.call('GET', `/oauth/logout?post_logout_redirect_uri=${encodeURIComponent(APP_DONE)}&state=xyz`, {
      headers: { cookie: `gh_refresh=${s.cookie}` },
    });
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `${APP_DONE}?state=xyz`);
    assert.match(String(r.headers['set-cookie']), /gh_refresh=; .*Max-Age=0/);
    const again = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: s.refreshToken } });
    assert.equal(again.status, 401);
  });

  test('a URI outside allowedRedirectUrls: 400 invalid_request and the session stays; none: 200 {}', async () => {
    await user(t, 'oa', { email: 'stay@oa.test' });
    const s = await signedIn(t, { email: 'stay@oa.test' });
    const bad = await t.call(
      'GET',
      `/oauth/logout?post_logout_redirect_uri=${encodeURIComponent('https://evil.example.test/x')}`,
      { headers: { cookie: `gh_refresh=${s.cookie}` } },
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'invalid_request');
    assert.equal(bad.headers.location, undefined);
    const still = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: s.refreshToken } });
    assert.equal(still.status, 201);
    const plain = await t.call('GET', '/oauth/logout', {
      headers: { cookie: `gh_refresh=${encodeURIComponent(still.body.refreshToken)}` },
    });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, {});
    const ended = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: still.body.refreshToken } });
    assert.equal(ended.status, 401);
  });
});
