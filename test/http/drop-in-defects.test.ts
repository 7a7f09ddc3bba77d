import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { startOidcIdp } from '../fixtures/sso/oidc-idp.ts';

let t: TestApp;
let vendor: string;
let idp: Awaited<ReturnType<typeof startOidcIdp>>;
const PAGE_A = 'https://app.example/oidc/callback';
const PAGE_B = 'https://app.example/identity/oidc/callback';
const PAGE_C = 'https://app.example/body/oidc/callback';

before(async () => {
  idp = await startOidcIdp([
    { client_id: 'drop-in-sso', client_secret: 'drop-in-sso-secret-0123456789', redirect_uris: [PAGE_A, PAGE_B, PAGE_C] },
  ]);
  // The local providers listen on loopback: outbound requests to private addresses are allowed here.
  t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  vendor = await t.vendorToken();
});
after(async () => {
  await t?.close();
  await idp?.close();
});

async function account(tenantId: string, extra: Record<string, unknown> = {}) {
  const r = await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId, name: tenantId, ...extra } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

describe('MFA policy: a device lifetime of 0 where nothing is remembered', () => {
  const P = '/identity/resources/configurations/v1/mfa-policy';
  test('0 is accepted with allowRememberMyDevice false and read back', async () => {
    await account('mfa-zero');
    const h = { 'gatehouse-tenant-id': 'mfa-zero' };
    const r = await t.call('PUT', P, { token: vendor, headers: h, body: { allowRememberMyDevice: false, mfaDeviceExpiration: 0 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaDeviceExpiration, 0);
    assert.equal(r.body.allowRememberMyDevice, false);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.mfaDeviceExpiration, 0);
  });
  test('0 with remember-device on is 400 naming the field, and changes nothing', async () => {
    await account('mfa-zero-on');
    const h = { 'gatehouse-tenant-id': 'mfa-zero-on' };
    const bad = await t.call('PUT', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true, mfaDeviceExpiration: 0 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /mfaDeviceExpiration/);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.tenantId, null);
    // Turning remember-device on over a stored 0 is the same combination.
    assert.equal((await t.call('PUT', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status, 200);
    const on = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true } });
    assert.equal(on.status, 400);
    assert.match(on.body.errors[0], /mfaDeviceExpiration/);
    const g = await t.call('GET', P, { token: vendor, headers: h });
    assert.equal(g.body.allowRememberMyDevice, false);
    const both = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true, mfaDeviceExpiration: 600 } });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.equal((await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status, 400);
    assert.equal((await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 30 } })).status, 400);
  });
});

describe('SSO pre-login for OIDC uses the environment\'s redirect page', () => {
  const TENANT = 'drop-oidc';
  const PRELOGIN = '/identity/resources/auth/v2/user/sso/prelogin';
  const setPage = (prefix: string, body: Record<string, unknown>) =>
    t.call('POST', `${prefix}/resources/sso/v1/oidc/configurations`, { token: vendor, body });
  const redirectOf = (address: string) => new URL(address).searchParams.get('redirect_uri');

  before(async () => {
    idp.accounts.set('u-dora', { email: 'dora@drop-oidc.test', name: 'Dora' });
    await account(TENANT);
    const env = await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [PAGE_A, PAGE_B, PAGE_C] },
    });
    assert.ok(env.status < 300, JSON.stringify(env.body));
    const made = await t.call('POST', '/team/resources/sso/v1/configurations', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: {
        type: 'oidc',
        enabled: true,
        oidcClientId: 'drop-in-sso',
        oidcSecret: 'drop-in-sso-secret-0123456789',
        configMetadata: { issuer: idp.issuer, scopes: 'openid email profile' },
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const base = `/team/resources/sso/v1/configurations`;
    const dom = await t.call('POST', `${base}/${made.body.id}/domains`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { domain: 'drop-oidc.test' },
    });
    assert.equal(dom.status, 201, JSON.stringify(dom.body));
    await t.call('PUT', `${base}/domains/drop-oidc.test/force-validate`, { token: vendor, body: {} });
  });

  test('with no page set, {email} alone is a 400 naming redirectUri', async () => {
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /redirectUri/);
  });

  test('{email} alone uses the stored page, and the sign-in finishes through it', async () => {
    assert.equal((await setPage('/team', { active: true, redirectUri: PAGE_A })).status, 201);
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.type, 'oidc');
    assert.equal(redirectOf(r.body.address), PAGE_A);
    idp.state.nextLogin = 'u-dora';
    const cb = await idp.authorize(r.body.address, PAGE_A);
    const done = await t.call('POST', '/identity/resources/auth/v1/user/oidc/postlogin', {
      body: { code: cb.searchParams.get('code'), state: cb.searchParams.get('state'), iss: cb.searchParams.get('iss') ?? undefined },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(done.body.accessToken);
  });

  test('the /identity twin sets the same page; a body redirectUri still wins', async () => {
    assert.equal((await setPage('/identity', { active: true, redirectUri: PAGE_B })).status, 201);
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(redirectOf(r.body.address), PAGE_B);
    const own = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test', redirectUri: PAGE_C } });
    assert.equal(redirectOf(own.body.address), PAGE_C);
  });

  test('an inactive page is not used; a page no longer allow-listed is refused', async () => {
    assert.equal((await setPage('/team', { active: false })).status, 201);
    const off = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(off.status, 400);
    assert.match(off.body.errors[0], /redirectUri/);
    assert.equal((await setPage('/team', { active: true })).status, 201);
    await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowedRedirectUrls: [PAGE_C] } });
    const gone = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(gone.status, 400);
    assert.match(gone.body.errors[0], /redirect page/);
    await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowedRedirectUrls: [PAGE_A, PAGE_B, PAGE_C] } });
  });
});

describe('Accounts: alias, and GET /tenants/resources/tenants/v2/alias/{alias}', () => {
  const V1 = '/tenants/resources/tenants/v1';
  const V2 = '/tenants/resources/tenants/v2';
  test('an alias set on create finds the account (any case); unknown is 404', async () => {
    const made = await account('alias-one', { alias: 'Acme-Corp' });
    assert.equal(made.alias, 'Acme-Corp');
    const r = await t.call('GET', `${V2}/alias/Acme-Corp`, { token: vendor });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.tenantId, 'alias-one');
    assert.equal(r.body.alias, 'Acme-Corp');
    assert.equal((await t.call('GET', `${V2}/alias/acme-corp`, { token: vendor })).body.tenantId, 'alias-one');
    const none = await t.call('GET', `${V2}/alias/no-such-alias`, { token: vendor });
    assert.equal(none.status, 404);
    assert.match(none.body.errors[0], /alias no-such-alias/);
    assert.equal((await t.call('GET', `${V2}/alias-one`, { token: vendor })).body.alias, 'Acme-Corp');
    // The route needs the environment's token.
    assert.equal((await t.call('GET', `${V2}/alias/Acme-Corp`)).status, 401);
  });
  test('a duplicate alias is 409 on create and update and changes nothing', async () => {
    const dup = await t.call('POST', V1, { token: vendor, body: { tenantId: 'alias-two', name: 'two', alias: 'ACME-corp' } });
    assert.equal(dup.status, 409);
    assert.match(dup.body.errors[0], /alias/);
    assert.equal((await t.call('GET', `${V2}/alias-two`, { token: vendor })).body.length, 0);
    await account('alias-two', { alias: 'two' });
    const upd = await t.call('PUT', `${V2}/alias-two`, { token: vendor, body: { alias: 'acme-corp', name: 'renamed' } });
    assert.equal(upd.status, 409);
    const still = await t.call('GET', `${V2}/alias-two`, { token: vendor });
    assert.equal(still.body.alias, 'two');
    assert.equal(still.body.name, 'alias-two');
  });
  test('update sets and clears it; a removed account frees its alias; bad aliases are 400', async () => {
    await account('alias-three');
    const set = await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'third' } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal((await t.call('GET', `${V2}/alias/third`, { token: vendor })).body.tenantId, 'alias-three');
    assert.equal((await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: null } })).body.alias, null);
    assert.equal((await t.call('GET', `${V2}/alias/third`, { token: vendor })).status, 404);
    assert.equal((await t.call('DELETE', `${V1}/alias-one`, { token: vendor })).status, 200);
    assert.equal((await t.call('GET', `${V2}/alias/Acme-Corp`, { token: vendor })).status, 404);
    assert.equal((await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'acme-corp' } })).status, 200);
    const bad = await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'has space' } });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body.errors), /alias/);
    assert.equal((await t.call('POST', V1, { token: vendor, body: { tenantId: 'alias-four', alias: '' } })).status, 400);
  });
});
