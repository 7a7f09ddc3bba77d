import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, VENDOR, type TestApp } from '../helpers/harness.ts';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => t?.close());

describe('health, trace ids, errors', () => {
  test('GET /health is 200 and every response carries gatehouse-trace-id', async () => {
    const r = await t.call('GET', '/health');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'ok' });
    assert.match(String(r.headers['gatehouse-trace-id']), /^[0-9a-f]{32}$/);
  });

  test('unknown route: 404 in the wire error body, with a trace id', async () => {
    const r = await t.call('GET', '/nope');
    assert.equal(r.status, 404);
    assert.equal(r.body.errorCode, 'GH-10002');
    assert.match(r.body.errors[0], /No route GET \/nope/);
    assert.ok(r.headers['gatehouse-trace-id']);
  });

  test('/frontegg prefix aliases every route', async () => {
    const r = await t.call('POST', '/frontegg/auth/vendor', { body: VENDOR });
    assert.equal(r.status, 200);
    assert.ok(r.body.token);
  });

  test('non-JSON content type is a 415; malformed JSON a 400', async () => {
    const a = await t.call('POST', '/auth/vendor', { raw: 'clientId=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(a.status, 415);
    assert.equal(a.body.errorCode, 'GH-10004');
    const b = await t.call('POST', '/auth/vendor', {
      raw: '{"clientId":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(b.status, 400);
    assert.equal(b.body.errorCode, 'GH-10005');
  });

  test('an oversized body is a 413', async () => {
    const r = await t.call('POST', '/auth/vendor', { body: { clientId: 'x', secret: 'y'.repeat(1024 * 1024 + 10) } });
    assert.equal(r.status, 413);
    assert.equal(r.body.errorCode, 'GH-10003');
  });

  test('validation errors name the field and the rule', async () => {
    const r = await t.call('POST', '/auth/vendor', { body: { clientId: 5 } });
    assert.equal(r.status, 400);
    assert.equal(r.body.errorCode, 'GH-10001');
    assert.match(r.body.errors.join(' '), /body\.(clientId must be string|secret is required)/);
  });

  test('OpenAPI document lists the routes with their schemas', async () => {
    const r = await t.call('GET', '/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.0.3');
    assert.ok(r.body.paths['/tenants/resources/tenants/v2']);
    assert.ok(r.body.paths['/auth/vendor'].post.requestBody);
    const docs = await t.call('GET', '/docs');
    assert.ok([200, 302].includes(docs.status));
  });
});

describe('environment auth', () => {
  test('POST /auth/vendor exchanges credentials for a vendor token', async () => {
    const r = await t.call('POST', '/auth/vendor', { body: VENDOR });
    assert.equal(r.status, 200);
    assert.equal(r.body.expiresIn, 86400);
    const payload = JSON.parse(Buffer.from(r.body.token.split('.')[1], 'base64url').toString());
    assert.equal(payload.type, 'vendor');
    assert.equal(payload.sub, VENDOR.clientId);
  });

  test('wrong secret and unknown client both answer 401 with the same body', async () => {
    const a = await t.call('POST', '/auth/vendor', {
      body: { clientId: VENDOR.clientId, secret: 'wrong-secret-value' },
    });
    const b = await t.call('POST', '/auth/vendor', { body: { clientId: 'nobody', secret: 'wrong-secret-value' } });
    assert.equal(a.status, 401);
    assert.deepEqual(a.body, b.body);
    assert.equal(a.body.errorCode, 'GH-20005');
  });

  test('missing, malformed and forged tokens are 401; x-access-token works for vendor tokens', async () => {
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2')).status, 401);
    assert.equal(
      (await t.call('GET', '/tenants/resources/tenants/v2', { headers: { authorization: 'Basic abc' } })).status,
      401,
    );
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2', { token: 'a.b.c' })).status, 401);
    const token = await t.vendorToken();
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${Buffer.from('x'.repeat(256)).toString('base64url')}`;
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2', { token: forged })).status, 401);
    const ok = await t.call('GET', '/tenants/resources/tenants/v2', { headers: { 'x-access-token': token } });
    assert.equal(ok.status, 200);
  });

  test('a user token on a vendor route is 403; an expired token is 401', async () => {
    const user = await t.userToken({ tenantId: 'acme' });
    const r = await t.call('GET', '/tenants/resources/tenants/v2', { token: user });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-20003');
    const expired = await t.userToken({ tenantId: 'acme' }, -10);
    const e = await t.call('DELETE', '/tenants/resources/tenants/v1', { token: expired });
    assert.equal(e.status, 401);
  });

  test('credentials: create (secret once), exchange, list without secrets, revoke stops exchange and tokens', async () => {
    const vendor = await t.vendorToken();
    const created = await t.call('POST', '/auth/vendor/credentials', { token: vendor, body: { description: 'ci' } });
    assert.equal(created.status, 201);
    assert.ok(created.body.secret.length >= 40);
    const ex = await t.call('POST', '/auth/vendor', {
      body: { clientId: created.body.clientId, secret: created.body.secret },
    });
    assert.equal(ex.status, 200);
    const list = await t.call('GET', '/auth/vendor/credentials', { token: vendor });
    const mine = list.body.find((c: any) => c.id === created.body.id);
    assert.equal(mine.description, 'ci');
    assert.equal(mine.secret, undefined);
    assert.ok(!JSON.stringify(list.body).includes(created.body.secret));

    const del = await t.call('DELETE', `/auth/vendor/credentials/${created.body.id}`, { token: vendor });
    assert.equal(del.status, 204);
    assert.equal(
      (await t.call('POST', '/auth/vendor', { body: { clientId: created.body.clientId, secret: created.body.secret } }))
        .status,
      401,
    );
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2', { token: ex.body.token })).status, 401);
    assert.equal(
      (await t.call('DELETE', `/auth/vendor/credentials/${created.body.id}`, { token: vendor })).status,
      404,
    );
    assert.equal((await t.call('DELETE', '/auth/vendor/credentials/not-a-uuid', { token: vendor })).status, 400);
  });

  test('a scoped credential reaches only its services', async () => {
    const vendor = await t.vendorToken();
    const created = await t.call('POST', '/auth/vendor/credentials', {
      token: vendor,
      body: { scopes: ['tenants:read'] },
    });
    const { body } = await t.call('POST', '/auth/vendor', {
      body: { clientId: created.body.clientId, secret: created.body.secret },
    });
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2', { token: body.token })).status, 200);
    const w = await t.call('POST', '/tenants/resources/tenants/v1', { token: body.token, body: { name: 'x' } });
    assert.equal(w.status, 403);
    assert.equal(w.body.errorCode, 'GH-20007');
    assert.equal((await t.call('GET', '/auth/vendor/credentials', { token: body.token })).status, 403);
    const bad = await t.call('POST', '/auth/vendor/credentials', { token: vendor, body: { scopes: ['everything'] } });
    assert.equal(bad.status, 400);
  });
});

describe('signing keys', () => {
  test('JWKS and configuration publish the key; rotation keeps old tokens valid', async () => {
    const vendor = await t.vendorToken();
    const jwks = await t.call('GET', '/.well-known/jwks.json');
    assert.equal(jwks.status, 200);
    assert.equal(jwks.body.keys[0].alg, 'RS256');
    assert.equal(jwks.body.keys[0].d, undefined, 'no private part');
    const cfg = await t.call('GET', '/identity/resources/configurations/v1', { token: vendor });
    assert.equal(cfg.status, 200);
    assert.match(cfg.body.publicKey, /^-----BEGIN PUBLIC KEY-----/);
    assert.equal(cfg.body.defaultTokenExpiration, 300);

    const rot = await t.call('POST', '/identity/resources/configurations/v1/signing-keys/rotate', {
      token: vendor,
      body: {},
    });
    assert.equal(rot.status, 201);
    const after = await t.call('GET', '/.well-known/jwks.json');
    assert.equal(after.body.keys.length, 2);
    assert.equal(after.body.keys[0].kid, rot.body.kid);
    // The token signed by the old key still verifies.
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2', { token: vendor })).status, 200);
    const cfg2 = await t.call('GET', '/identity/resources/configurations/v1', { token: vendor });
    assert.notEqual(cfg2.body.publicKey, cfg.body.publicKey);
    const keys = await t.call('GET', '/identity/resources/configurations/v1/signing-keys', { token: vendor });
    assert.deepEqual(
      keys.body.map((k: any) => k.status),
      ['active', 'retired'],
    );
    // Private keys are stored encrypted.
    const { rows } = await t.db.query<{ private_key_enc: string }>('SELECT private_key_enc FROM signing_keys');
    for (const r of rows) assert.ok(r.private_key_enc.startsWith('v1.') && !r.private_key_enc.includes('PRIVATE KEY'));
  });

  test('configuration update validates and persists', async () => {
    const vendor = await t.vendorToken();
    const bad = await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { defaultTokenExpiration: 1 },
    });
    assert.equal(bad.status, 400);
    const empty = await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: {} });
    assert.equal(empty.status, 400);
    const ok = await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { defaultTokenExpiration: 600 },
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.defaultTokenExpiration, 600);
    assert.equal(
      (await t.call('GET', '/identity/resources/configurations/v1', { token: vendor })).body.defaultTokenExpiration,
      600,
    );
  });
});
