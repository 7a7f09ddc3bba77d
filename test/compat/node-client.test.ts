import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VENDOR } from '../helpers/harness.ts';
import { startListeningApp, type ListeningApp } from '../helpers/listening.ts';

// The vendor's Node SDK (@frontegg/client), unchanged, against a listening Gatehouse.
let t: ListeningApp;
let sdk: typeof import('@frontegg/client');
let userToken: string;
const PASSWORD = 'correct horse battery staple';

before(async () => {
  t = await startListeningApp();
  // The SDK reads its service addresses from the environment when it is loaded.
  process.env.FRONTEGG_API_GATEWAY_URL = t.origin;
  process.env.FRONTEGG_AUTHENTICATOR_NUMBER_OF_TRIES = '1';
  sdk = await import('@frontegg/client');
  const vendor = await t.vendorToken();
  await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId: 'n-one', name: 'One' } });
  const u = await t.call('POST', '/identity/resources/users/v1', {
    token: vendor,
    body: { email: 'node@one.test', password: PASSWORD },
    headers: { 'gatehouse-tenant-id': 'n-one' },
  });
  assert.equal(u.status, 201, JSON.stringify(u.body));
  const body = { email: 'node@one.test', password: PASSWORD };
  const s = await t.call('POST', '/identity/resources/auth/v1/user', { body });
  assert.equal(s.status, 200, JSON.stringify(s.body));
  userToken = s.body.accessToken;
  sdk.FronteggContext.init({ FRONTEGG_CLIENT_ID: VENDOR.clientId, FRONTEGG_API_KEY: VENDOR.secret });
});
after(async () => t?.close());

describe('@frontegg/client', () => {
  test('FronteggAuthenticator signs the vendor in with its client id and key', async () => {
    const a = new sdk.FronteggAuthenticator();
    await a.init(VENDOR.clientId, VENDOR.secret);
    try {
      assert.equal(typeof a.accessToken, 'string');
      assert.ok(a.accessToken.split('.').length === 3);
    } finally {
      await a.shutdown();
    }
  });

  test('FronteggAuthenticator refuses a wrong key', async () => {
    const a = new sdk.FronteggAuthenticator();
    await assert.rejects(a.init(VENDOR.clientId, 'not-the-key'), /Failed to authenticate/);
    await a.shutdown();
  });

  test('IdentityClient.validateToken accepts a signed-in user token and answers its claims', async () => {
    const entity = await sdk.IdentityClient.getInstance().validateToken(`Bearer ${userToken}`);
    assert.equal(entity.type, 'userToken');
    assert.equal(entity.tenantId, 'n-one');
    // IUser of the SDK's types (not exported from the package root).
    const user = entity as typeof entity & { userId: string; email?: string; roles: string[] };
    assert.equal(user.email, 'node@one.test');
    assert.equal(typeof user.userId, 'string');
    assert.equal(user.userId, user.sub);
    assert.ok(user.roles.includes('admin'));
  });

  test('validateToken with roles and permissions the token holds', async () => {
    const entity = await sdk.IdentityClient.getInstance().validateToken(userToken, {
      roles: ['admin'],
      permissions: ['fe.account-settings.delete.account'],
    });
    assert.equal(entity.tenantId, 'n-one');
  });

  test('validateToken refuses a tampered token (401)', async () => {
    const [h, p, s] = userToken.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, tenantId: 'other' })).toString('base64url')}.${s}`;
    await assert.rejects(sdk.IdentityClient.getInstance().validateToken(forged), (e: { statusCode: number }) => {
      assert.equal(e.statusCode, 401);
      return true;
    });
  });

  test('validateToken refuses a missing permission (403) and a missing role (403)', async () => {
    const id = sdk.IdentityClient.getInstance();
    const missing = id.validateToken(userToken, { permissions: ['not.a.held.permission'] });
    await assert.rejects(missing, (e: { statusCode: number }) => {
      assert.equal(e.statusCode, 403);
      return true;
    });
    await assert.rejects(id.validateToken(userToken, { roles: ['no-such-role'] }), (e: { statusCode: number }) => {
      assert.equal(e.statusCode, 403);
      return true;
    });
  });
});
