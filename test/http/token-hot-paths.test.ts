import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

/**
 * The token hot paths (client-credentials exchange, API-token refresh, user refresh) store their success audit entry
 * in their own statement, and sign tokens with node:crypto: the entries must be exactly those the audit hook wrote
 * (one per request, same fields; failures still recorded by the hook), and the tokens keep jose's format.
 */

const EXCHANGE = '/identity/resources/auth/v2/api-token';
const API_REFRESH = '/identity/resources/auth/v2/api-token/token/refresh';
const USER_REFRESH = '/identity/resources/auth/v1/user/token/refresh';
const H = { 'gatehouse-tenant-id': 'hot-a' };
const UA = { 'user-agent': 'hot-paths-test/1.0' };

let t: TestApp;
let vendor: string;
let creds: { clientId: string; secret: string };
before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'hot-a', name: 'Hot A' });
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  const readOnly = roles.body.find((r: any) => r.key === 'read-only').id;
  const created = await t.call('POST', '/identity/resources/tenants/api-tokens/v1', {
    token: vendor,
    headers: H,
    body: { description: 'hot', roleIds: [readOnly] },
  });
  assert.equal(created.status, 201);
  creds = { clientId: created.body.clientId, secret: created.body.secret };
});
after(async () => t?.close());

async function entries(since: string, action: string) {
  const r = await t.call(
    'GET',
    `/audits?from=${encodeURIComponent(since)}&sortDirection=asc&count=1000&action=${encodeURIComponent(action)}`,
    { token: vendor },
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data as any[];
}

const parts = (jwt: string) =>
  jwt
    .split('.')
    .slice(0, 2)
    .map((p) => Buffer.from(p, 'base64url').toString('utf8'));

describe('token hot paths: audit entries stored with the change', () => {
  test("exchange: one success entry per request with the hook's fields; a bad secret is still a failure entry", async () => {
    const since = new Date().toISOString();
    const ok = await t.call('POST', EXCHANGE, { body: creds, headers: UA });
    assert.equal(ok.status, 200);
    const ok2 = await t.call('POST', EXCHANGE, { body: creds, headers: UA });
    assert.equal(ok2.status, 200);
    const bad = await t.call('POST', EXCHANGE, { body: { ...creds, secret: 'wrong' }, headers: UA });
    assert.equal(bad.status, 401);
    const got = await entries(since, 'api_token.sign_in');
    assert.deepEqual(
      got.map((e) => [e.outcome, e.data.statusCode, e.data.errorCode ?? null]),
      [
        ['success', 200, null],
        ['success', 200, null],
        ['failure', 401, bad.body.errorCode],
      ],
    );
    for (const e of got) {
      assert.deepEqual(e.actor, { type: 'anonymous', id: null });
      assert.equal(e.userAgent, 'hot-paths-test/1.0');
      assert.equal(e.data.method, 'POST');
      assert.equal(e.data.path, EXCHANGE);
      assert.equal(e.severity, e.outcome === 'success' ? 'Info' : 'Medium');
      assert.ok(e.hash, 'chained');
    }
  });

  test('API-token refresh: one success entry; a replayed refresh token is a failure entry and no success', async () => {
    const x = await t.call('POST', EXCHANGE, { body: creds });
    const since = new Date().toISOString();
    const r1 = await t.call('POST', API_REFRESH, { body: { refreshToken: x.body.refresh_token } });
    assert.equal(r1.status, 200);
    const replay = await t.call('POST', API_REFRESH, { body: { refreshToken: x.body.refresh_token } });
    assert.equal(replay.status, 401);
    const got = await entries(since, 'api_token.token_refresh');
    assert.deepEqual(
      got.map((e) => [e.outcome, e.data.statusCode]),
      [
        ['success', 200],
        ['failure', 401],
      ],
    );
  });

  test('user refresh: one user.token_refresh entry with the user as actor and target; a replay is only a failure', async () => {
    const u = await user(t, 'hot-a', { email: 'hot@a.test' });
    const login = await signedIn(t, u);
    const since = new Date().toISOString();
    const r1 = await t.call('POST', USER_REFRESH, { body: { refreshToken: login.refreshToken }, headers: UA });
    assert.equal(r1.status, 201);
    const replay = await t.call('POST', USER_REFRESH, { body: { refreshToken: login.refreshToken }, headers: UA });
    assert.equal(replay.status, 401);
    const got = await entries(since, 'user.token_refresh');
    assert.deepEqual(
      got.map((e) => [
        e.outcome,
        e.data.statusCode,
        `${e.actor.type}:${e.actor.id}`,
        `${e.target.type}:${e.target.id}`,
      ]),
      [
        ['success', 201, `user:${u.id}`, `user:${u.id}`],
        ['failure', 401, 'anonymous:null', 'null:null'],
      ],
    );
    assert.equal(got[0].userAgent, 'hot-paths-test/1.0');
    // The rotated token of the success still works (the statement that stored the entry also rotated).
    assert.equal(
      (await t.call('POST', USER_REFRESH, { body: { refreshToken: r1.body.refreshToken } })).status,
      401,
      'the replay revoked the session',
    );
  });

  test('user refresh: concurrent uses of one token give one success entry; the uses that lost are failures only', async () => {
    // The refresh runs without a transaction: on PostgreSQL the uses read the token unrotated together, and only the
    // rotation's condition tells them apart; the entry is stored by the rotation's statement only when it rotates.
    // (PGlite happens to finish one use's lookup before the next starts, so only PostgreSQL exercises the race.)
    const u = await user(t, 'hot-a', { email: 'race@a.test' });
    for (let round = 0; round < 3; round++) {
      const login = await signedIn(t, u);
      const since = new Date().toISOString();
      const answers = await Promise.all(
        [1, 2, 3].map(() => t.call('POST', USER_REFRESH, { body: { refreshToken: login.refreshToken }, headers: UA })),
      );
      const winners = answers.filter((a) => a.status === 201);
      assert.equal(winners.length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
      const got = await entries(since, 'user.token_refresh');
      assert.deepEqual(got.map((e) => e.outcome).sort(), ['failure', 'failure', 'success'], `round ${round}`);
      assert.equal(
        (await t.call('POST', USER_REFRESH, { body: { refreshToken: winners[0].body.refreshToken } })).status,
        401,
        'the losing uses revoked the session',
      );
    }
  });
});

describe('token hot paths: token format', () => {
  test("access tokens keep jose's layout (header alg, kid, typ; claims then iss, iat, exp) and verify against the JWKS, for every algorithm", async () => {
    for (const algorithm of ['RS256', 'ES256', 'EdDSA']) {
      if (algorithm !== 'RS256') {
        const rot = await t.call('POST', '/identity/resources/configurations/v1/signing-keys/rotate', {
          token: await t.vendorToken(),
          body: { algorithm },
        });
        assert.equal(rot.status, 201);
      }
      const jwks = createLocalJWKSet((await t.call('GET', '/.well-known/jwks.json')).body);
      const x = await t.call('POST', EXCHANGE, { body: creds });
      assert.equal(x.status, 200);
      const token: string = x.body.access_token;
      const [header, payload] = parts(token);
      const kid = JSON.parse(header).kid;
      assert.equal(header, JSON.stringify({ alg: algorithm, kid, typ: 'JWT' }), 'header bytes');
      const keys = Object.keys(JSON.parse(payload));
      assert.deepEqual(keys.slice(-3), ['iss', 'iat', 'exp']);
      assert.equal(keys[0], 'type');
      const { payload: claims, protectedHeader } = await jwtVerify(token, jwks, { issuer: t.ctx.config.publicUrl });
      assert.equal(protectedHeader.alg, algorithm);
      assert.equal(claims.exp! - claims.iat!, x.body.expires_in);
      assert.equal(claims.type, 'tenantApiToken');
      // The server accepts its own token on a guarded route.
      assert.notEqual(
        (await t.call('GET', '/identity/resources/tenants/api-tokens/v1', { token })).status,
        401,
        'the token verifies',
      );
    }
  });
});

describe('token hot paths: the IP gate cache', () => {
  test("a change of the account's IP restrictions applies to the next exchange and API-token refresh at once", async () => {
    const IP = '/identity/resources/configurations/v1/restrictions/ip';
    const from = (remoteAddress: string) => t.call('POST', EXCHANGE, { body: creds, remoteAddress });
    const first = await from('203.0.113.5');
    assert.equal(first.status, 200, 'no restrictions: admitted (and the empty state is cached)');
    assert.equal(
      (await t.call('POST', IP, { token: vendor, headers: H, body: { ip: '10.9.9.0/24', strategy: 'ALLOW' } })).status,
      201,
    );
    // The account's administrator signed in from the test's default address: it stays admitted (no lockout).
    assert.equal(
      (await t.call('POST', IP, { token: vendor, headers: H, body: { ip: '127.0.0.1/32', strategy: 'ALLOW' } })).status,
      201,
    );
    assert.equal(
      (await t.call('POST', `${IP}/config`, { token: vendor, headers: H, body: { strategy: 'ALLOW', isActive: true } }))
        .status,
      201,
    );
    const refused = await from('203.0.113.5');
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.errorCode,
      (
        await t.call('POST', API_REFRESH, {
          body: { refreshToken: first.body.refresh_token },
          remoteAddress: '203.0.113.5',
        })
      ).body.errorCode,
    );
    assert.equal((await from('10.9.9.7')).status, 200, 'on the allow list');
    assert.equal(
      (await t.call('POST', `${IP}/config`, { token: vendor, headers: H, body: { isActive: false } })).status,
      201,
    );
    assert.equal((await from('203.0.113.5')).status, 200, 'deactivated: admitted again at once');
  });
});
