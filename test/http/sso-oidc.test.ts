import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';
import { startOidcIdp } from '../fixtures/sso/oidc-idp.ts';

/** OIDC SSO against a real OpenID provider (oidc-provider) on a local port: discovery, code + PKCE + nonce. */
const APP_CB = 'https://app.example/oidc/callback';
const TENANT = 'globex-oidc';

describe('OIDC SSO', () => {
  let t: TestApp;
  let vendor: string;
  let idp: Awaited<ReturnType<typeof startOidcIdp>>;
  let configId: string;
  const h = { 'gatehouse-tenant-id': TENANT };

  before(async () => {
    idp = await startOidcIdp([
      { client_id: 'gatehouse-sso', client_secret: 'sso-client-secret-0123456789', redirect_uris: [APP_CB] },
    ]);
    idp.accounts.set('u-alice', { email: 'alice@globex.test', name: 'Alice Globex', groups: ['engineering'] });
    idp.accounts.set('u-unverified', { email: 'eve@globex.test', email_verified: false });
    idp.accounts.set('u-outsider', { email: 'mallory@elsewhere.test' });
    // The test IdP listens on loopback: an IdP on a private network needs the switch.
    t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
    vendor = await t.vendorToken();
    await account(t, { id: TENANT, name: 'Globex' });
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [APP_CB] },
    });
    const role = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      body: [{ key: 'oidc-eng', name: 'Engineering', level: 1 }],
    });
    const roleId = (Array.isArray(role.body) ? role.body[0] : role.body).id;
    const made = await t.call('POST', '/team/resources/sso/v1/configurations', {
      token: vendor,
      headers: h,
      body: {
        type: 'oidc',
        enabled: true,
        oidcClientId: 'gatehouse-sso',
        oidcSecret: 'sso-client-secret-0123456789',
        configMetadata: { issuer: idp.issuer, scopes: 'openid email profile groups', provider: 'okta' },
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    configId = made.body.id;
    assert.equal(JSON.stringify(made.body).includes('sso-client-secret'), false, 'the secret is never answered');
    const dom = await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/domains`, {
      token: vendor,
      headers: h,
      body: { domain: 'globex.test' },
    });
    await t.call('PUT', '/team/resources/sso/v1/configurations/domains/globex.test/force-validate', {
      token: vendor,
      body: {},
    });
    assert.equal(dom.status, 201);
    assert.equal(
      (
        await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/groups`, {
          token: vendor,
          headers: h,
          body: { group: 'engineering', roleIds: [roleId] },
        })
      ).status,
      201,
    );
  });
  after(async () => {
    await t?.close();
    await idp?.close();
  });

  async function start(email = 'alice@globex.test') {
    const r = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email, redirectUri: APP_CB },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.type, 'oidc');
    const url = new URL(r.body.address);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(url.searchParams.get('nonce') && url.searchParams.get('state') && url.searchParams.get('code_challenge'));
    return url;
  }
  const postlogin = (cb: URL, state = cb.searchParams.get('state')!) =>
    t.call('POST', '/identity/resources/auth/v1/user/oidc/postlogin', {
      body: { code: cb.searchParams.get('code'), state, iss: cb.searchParams.get('iss') ?? undefined },
    });

  test('authorization code flow with PKCE and nonce signs the user in to the account, provisioned with mapped roles', async () => {
    idp.state.nextLogin = 'u-alice';
    const cb = await idp.authorize((await start()).href, APP_CB);
    const r = await postlogin(cb);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.accessToken);
    assert.match(String(r.headers['set-cookie']), /gh_refresh=/);
    const claims = JSON.parse(Buffer.from(r.body.accessToken.split('.')[1], 'base64url').toString());
    assert.equal(claims.tenantId, TENANT);
    assert.ok(claims.roles.includes('oidc-eng'));
    const user = await t.call('GET', `/identity/resources/users/v1/${claims.sub}`, { token: vendor, headers: h });
    assert.equal(user.body.provider, 'okta');
    assert.equal(user.body.name, 'Alice Globex');
    // The code and the state are single use.
    const again = await postlogin(cb);
    assert.equal(again.status, 400);
    assert.equal(again.body.errorCode, 'GH-66009');
  });

  test('state mismatch and nonce mismatch are refused', async () => {
    idp.state.nextLogin = 'u-alice';
    const first = await idp.authorize((await start()).href, APP_CB);
    const other = await start();
    const crossed = await postlogin(first, other.searchParams.get('state')!);
    assert.equal(crossed.status, 401, 'a code bound to another state (PKCE verifier) is refused');
    const unknown = await postlogin(first, 'forged-state');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errorCode, 'GH-66009');

    const url = await start();
    url.searchParams.set('nonce', 'attacker-chosen-nonce');
    const cb = await idp.authorize(url.href, APP_CB);
    const r = await postlogin(cb);
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, 'GH-66014');
    assert.match(r.body.errors[0], /nonce/);
  });

  test('redirect not in the allow-list, unverified email and an email outside the verified domains are refused', async () => {
    const bad = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email: 'alice@globex.test', redirectUri: 'https://evil.example/cb' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-66010');
    idp.state.nextLogin = 'u-unverified';
    const r1 = await postlogin(await idp.authorize((await start()).href, APP_CB));
    assert.equal(r1.status, 401);
    idp.state.nextLogin = 'u-outsider';
    const r2 = await postlogin(await idp.authorize((await start()).href, APP_CB));
    assert.equal(r2.status, 400);
    assert.equal(r2.body.errorCode, 'GH-66005');
  });

  test('a configuration needs an issuer and a client id; an unreachable issuer is a 502', async () => {
    assert.equal(
      (
        await t.call('POST', '/team/resources/sso/v1/configurations', {
          token: vendor,
          headers: h,
          body: { type: 'oidc', oidcClientId: 'x' },
        })
      ).status,
      400,
    );
    await account(t, { id: 'dead-oidc', name: 'Dead' });
    const dead = await t.call('POST', '/team/resources/sso/v1/configurations', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'dead-oidc' },
      body: { type: 'oidc', oidcClientId: 'x', configMetadata: { issuer: 'http://127.0.0.1:1' } },
    });
    assert.equal(dead.status, 201);
    const r = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email: 'x@y.test', tenantId: 'dead-oidc', redirectUri: APP_CB },
    });
    assert.equal(r.status, 502);
    assert.equal(r.body.errorCode, 'GH-66015');
  });
});
