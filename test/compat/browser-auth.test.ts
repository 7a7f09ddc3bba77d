import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { installBrowser, startListeningApp, type ListeningApp } from '../helpers/listening.ts';

// The vendor's browser SDK (@frontegg/rest-api), unchanged, through /frontegg with a cookie jar for a browser.
let t: ListeningApp;
let sdk: typeof import('@frontegg/rest-api');
let jar: Map<string, string>;
let vendor: string;
let userId: string;
const PASSWORD = 'correct horse battery staple';

before(async () => {
  t = await startListeningApp();
  ({ jar } = installBrowser(t.origin));
  sdk = await import('@frontegg/rest-api');
  sdk.ContextHolder.for('default').setContext({ baseUrl: t.origin });
  vendor = await t.vendorToken();
  for (const [tenantId, name] of [
    ['b-one', 'One'],
    ['b-two', 'Two'],
  ]) {
    const r = await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId, name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  const u = await t.call('POST', '/identity/resources/users/v1', {
    token: vendor,
    body: { email: 'browser@one.test', password: PASSWORD, name: 'Bea' },
    headers: { 'gatehouse-tenant-id': 'b-one' },
  });
  assert.equal(u.status, 201, JSON.stringify(u.body));
  userId = u.body.id;
  const j = await t.call('POST', `/identity/resources/users/v1/${userId}/tenant`, {
    token: vendor,
    body: { tenantId: 'b-two' },
  });
  assert.ok(j.status < 300, JSON.stringify(j.body));
});
after(async () => t?.close());

const context = () => sdk.ContextHolder.for('default');

describe('@frontegg/rest-api sign-in', () => {
  test('loginv2 answers the user, the accounts and the active account; the refresh cookie is set', async () => {
    const r = await sdk.api.auth.loginv2({ email: 'browser@one.test', password: PASSWORD });
    assert.equal(r.user.id, userId);
    assert.equal(r.user.email, 'browser@one.test');
    assert.equal(r.user.tenantId, 'b-one');
    assert.ok(r.user.accessToken);
    assert.equal(context().getAccessToken(), r.user.accessToken);
    assert.deepEqual(r.tenants!.map((a) => a.tenantId).sort(), ['b-one', 'b-two']);
    const one = r.tenants!.find((a) => a.tenantId === 'b-one')!;
    assert.equal(one.name, 'One');
    assert.equal(typeof one.id, 'string');
    assert.equal(typeof one.vendorId, 'string');
    assert.equal(r.activeTenant!.tenantId, 'b-one');
    assert.ok(jar.size > 0, 'a refresh cookie in the jar');
  });

  test('getMeV2 answers the signed-in user', async () => {
    const me = await sdk.api.auth.getMeV2();
    assert.equal(me.id, userId);
    assert.equal(me.email, 'browser@one.test');
    assert.equal(me.name, 'Bea');
    assert.ok(Array.isArray(me.roles) && Array.isArray(me.permissions));
  });

  test('getCurrentUserTenantsV3 and V1 answer {tenants, activeTenant}; getTenants the account records', async () => {
    for (const read of [sdk.api.users.getCurrentUserTenantsV3, sdk.api.users.getCurrentUserTenantsV1]) {
      const r = await read();
      assert.deepEqual(r.tenants!.map((a) => a.tenantId).sort(), ['b-one', 'b-two']);
      assert.equal(r.activeTenant!.tenantId, 'b-one');
      assert.equal(r.activeTenant!.name, 'One');
    }
    const list = await sdk.api.tenants.getTenants();
    assert.deepEqual(list.map((a) => a.tenantId).sort(), ['b-one', 'b-two']);
    assert.ok(list.every((a) => typeof a.id === 'string' && typeof a.vendorId === 'string' && a.createdAt));
  });

  test('refreshTokenV3 renews the session from the cookie alone', async () => {
    const before = context().getAccessToken();
    context().setAccessToken(null);
    const r = await sdk.api.auth.refreshTokenV3();
    assert.ok(r.user.accessToken);
    // Same session, renewed: a refresh in the same second may sign the very same claims, so compare sid and expiry.
    const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString());
    assert.equal(claims(r.user.accessToken).sid, claims(before!).sid);
    assert.ok(claims(r.user.accessToken).exp >= claims(before!).exp);
    assert.equal(r.user.id, userId);
    assert.equal(r.activeTenant!.tenantId, 'b-one');
  });

  test('switchTenant moves the active account; the next refresh carries it', async () => {
    await sdk.api.tenants.switchTenant({ tenantId: 'b-two' });
    const r = await sdk.api.auth.refreshTokenV3();
    assert.equal(r.user.tenantId, 'b-two');
    assert.equal(r.activeTenant!.tenantId, 'b-two');
    const mine = await sdk.api.users.getCurrentUserTenantsV3();
    assert.equal(mine.activeTenant.tenantId, 'b-two');
    await sdk.api.tenants.switchTenant({ tenantId: 'b-one' });
    assert.equal((await sdk.api.auth.refreshTokenV3()).user.tenantId, 'b-one');
  });

  test('logout ends the session: the cookie no longer refreshes', async () => {
    await sdk.api.auth.logout();
    context().setAccessToken(null);
    await assert.rejects(sdk.api.auth.refreshTokenV3(), (e: InstanceType<typeof sdk.FronteggApiError>) => {
      assert.equal(e.statusCode, 401);
      return true;
    });
  });

  test('a wrong password is a FronteggApiError carrying the wire error', async () => {
    const wrong = sdk.api.auth.loginv2({ email: 'browser@one.test', password: 'wrong' });
    await assert.rejects(wrong, (e: InstanceType<typeof sdk.FronteggApiError>) => {
      assert.equal(e.statusCode, 401);
      assert.ok(e.message.length > 0);
      return true;
    });
  });
});
