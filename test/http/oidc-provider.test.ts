import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { startBrowserApp, type BrowserApp } from '../helpers/browser.ts';
import { account, signedIn, user, type User } from '../fixtures/builders.ts';
import {
  authorizationRequest,
  browse,
  browserOf,
  codeFlow,
  oauthError,
  partsOf,
  rpApp,
  rpConfig,
} from '../fixtures/oidc-rp.ts';
import type { RpApp } from '../fixtures/oidc-rp.ts';

let t: BrowserApp;
let web: RpApp;
let spa: RpApp;
let alice: User;
const CB = 'https://rp.example.test/callback';
const SPA_CB = 'http://127.0.0.1:5173/cb';
const ME = '/identity/resources/users/v2/me';

const bearer = (token: string) => fetch(`${t.origin}${ME}`, { headers: { authorization: `Bearer ${token}` } });

before(async () => {
  t = await startBrowserApp({ OIDC_PROVIDER_ENABLED: 'true' });
  const acc = await account(t);
  alice = await user(t, acc, { name: 'Alice', verified: true });
  web = await rpApp(t, { redirectUri: CB });
  spa = await rpApp(t, { type: 'other', redirectUri: SPA_CB });
});
after(async () => t?.close());

describe('discovery', () => {
  test('the platform document names the provider endpoints; one issuer, one key set', async () => {
    const d = await (await fetch(`${t.origin}/.well-known/openid-configuration`)).json();
    assert.equal(d.issuer, t.origin);
    assert.equal(d.authorization_endpoint, `${t.origin}/oidc/auth`);
    assert.equal(d.token_endpoint, `${t.origin}/oauth/token`);
    assert.equal(d.end_session_endpoint, `${t.origin}/oauth/logout`);
    assert.equal(d.userinfo_endpoint, `${t.origin}/oidc/userinfo`);
    assert.equal(d.introspection_endpoint, `${t.origin}/oidc/token/introspection`);
    assert.equal(d.revocation_endpoint, `${t.origin}/oidc/token/revocation`);
    assert.deepEqual(d.response_types_supported, ['code']);
    assert.deepEqual(d.code_challenge_methods_supported, ['S256']);
    assert.ok(d.grant_types_supported.includes('authorization_code'));
    assert.ok(d.grant_types_supported.includes('client_credentials'));
    assert.ok(d.scopes_supported.includes('openid'));
  });
});

describe('confidential client (type web)', () => {
  test('client_secret_basic: the ID token claims; the access token is a platform user token of the live session', async () => {
    const config = await rpConfig(t.origin, web, 'basic');
    const { tokens, checks } = await codeFlow(t, config, web, await browserOf(t, alice));
    const id = tokens.claims()!;
    assert.equal(id.sub, alice.id);
    assert.equal(id.aud, web.id);
    assert.equal(id.nonce, checks.expectedNonce);
    assert.deepEqual(id.amr, ['pwd']);
    assert.equal(id.acr, 'urn:gatehouse:acr:single-factor');
    assert.equal(typeof id.auth_time, 'number');
    assert.equal(typeof id.sid, 'string');
    assert.equal(typeof id.at_hash, 'string');
    assert.equal(id.email, alice.email);
    const jwks = await (await fetch(`${t.origin}/.well-known/jwks.json`)).json();
    const kid = partsOf(tokens.id_token!, 0).kid;
    assert.ok(
      jwks.keys.some((k: { kid: string }) => k.kid === kid),
      'the ID token is signed by a platform key',
    );
    assert.equal(partsOf(tokens.access_token, 0).kid, kid);
    const at = partsOf(tokens.access_token, 1);
    assert.equal(at.type, 'userToken');
    assert.equal(at.sub, alice.id);
    assert.equal(at.tenantId, alice.tenantId);
    assert.equal(at.aud, t.ctx.environment.id);
    assert.equal(at.client_id, web.id);
    assert.ok(Array.isArray(at.permissions) && at.permissions.length > 0);
    const sessions = await t.ctx.db.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [alice.id]);
    assert.ok(
      sessions.rows.some((s) => s.id === at.sid),
      'sid is the Gatehouse session',
    );
    const me = await bearer(tokens.access_token);
    assert.equal(me.status, 200);
    assert.equal((await me.json()).id, alice.id);
    assert.ok(typeof tokens.refresh_token === 'string');
  });

  test('a JWT template targeted at the application shapes the access tokens issued to that client only', async () => {
    const vendor = await t.vendorToken();
    const call = (method: string, url: string, body: unknown) =>
      fetch(`${t.origin}${url}`, {
        method,
        headers: { authorization: `Bearer ${vendor}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const tpl = await call('POST', '/identity/resources/jwt-templates/v1', {
      key: 'for-web',
      name: 'For the web client',
      expiration: 600,
      algorithm: 'RS256',
      templateSchema: { claims: { app: 'web', mail: '{{user.email}}' } },
    });
    assert.equal(tpl.status, 201, await tpl.text());
    const rules = [
      {
        conditionLogic: 'and',
        conditions: [{ attribute: 'applicationId', op: 'in_list', value: { list: [web.id] } }],
        treatment: 'for-web',
      },
    ];
    const targeting = await call('PUT', '/identity/resources/configurations/v1/jwt-template-targeting', { rules });
    assert.ok(targeting.status < 300, await targeting.text());
    try {
      const targeted = await codeFlow(t, await rpConfig(t.origin, web, 'basic'), web, await browserOf(t, alice));
      const at = partsOf(targeted.tokens.access_token, 1);
      assert.equal(at.app, 'web');
      assert.equal(at.mail, alice.email);
      const other = await codeFlow(t, await rpConfig(t.origin, spa, 'none'), spa, await browserOf(t, alice));
      assert.equal(partsOf(other.tokens.access_token, 1).app, undefined, 'another client gets the default claims');
    } finally {
      await call('PUT', '/identity/resources/configurations/v1/jwt-template-targeting', { rules: [] });
    }
  });

  test('client_secret_post works; a wrong secret is invalid_client', async () => {
    const config = await rpConfig(t.origin, web, 'post');
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, alice));
    assert.equal(tokens.claims()!.sub, alice.id);
    const wrong = await rpConfig(t.origin, { ...web, secret: 'not-the-secret' }, 'post');
    const req = await authorizationRequest(wrong, web);
    const landing = await browse(t.origin, req.url, await browserOf(t, alice));
    assert.equal(
      await oauthError(client.authorizationCodeGrant(wrong, landing.redirect!, req.checks)),
      'invalid_client',
    );
  });

  test('userinfo answers the claims of the scopes', async () => {
    const config = await rpConfig(t.origin, web);
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, alice), { scope: 'openid email' });
    const info = await client.fetchUserInfo(config, tokens.access_token, alice.id);
    assert.equal(info.email, alice.email);
    assert.equal(info.name, undefined, 'profile was not asked for');
  });

  test('refresh rotates through /oauth/token; the old refresh token is then invalid_grant', async () => {
    const config = await rpConfig(t.origin, web);
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, alice));
    const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token);
    assert.equal(partsOf(next.access_token, 1).sid, partsOf(tokens.access_token, 1).sid);
    assert.equal((await bearer(next.access_token)).status, 200);
    assert.equal(await oauthError(client.refreshTokenGrant(config, tokens.refresh_token!)), 'invalid_grant');
  });

  test('introspection and revocation (RFC 7662, RFC 7009)', async () => {
    const config = await rpConfig(t.origin, web);
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, alice));
    const live = await client.tokenIntrospection(config, tokens.refresh_token!);
    assert.equal(live.active, true);
    assert.equal(live.client_id, web.id);
    assert.equal(live.sub, alice.id);
    await client.tokenRevocation(config, tokens.refresh_token!);
    assert.equal((await client.tokenIntrospection(config, tokens.refresh_token!)).active, false);
    assert.equal(await oauthError(client.refreshTokenGrant(config, tokens.refresh_token!)), 'invalid_grant');
  });

  test('a code is single use: a replay is invalid_grant and revokes what the first exchange issued', async () => {
    const config = await rpConfig(t.origin, web);
    const req = await authorizationRequest(config, web);
    const landing = await browse(t.origin, req.url, await browserOf(t, alice));
    const first = await client.authorizationCodeGrant(config, landing.redirect!, req.checks);
    assert.equal(
      await oauthError(client.authorizationCodeGrant(config, landing.redirect!, req.checks)),
      'invalid_grant',
    );
    assert.equal((await client.tokenIntrospection(config, first.refresh_token!)).active, false);
    assert.equal(await oauthError(client.refreshTokenGrant(config, first.refresh_token!)), 'invalid_grant');
    // The first exchange's access token is a JWT: it stops because the Gatehouse session it names was ended.
    assert.equal((await bearer(first.access_token)).status, 401);
  });
});

describe('public client (PKCE)', () => {
  test('code flow with S256 and no secret', async () => {
    const config = await rpConfig(t.origin, spa, 'none');
    const { tokens } = await codeFlow(t, config, spa, await browserOf(t, alice));
    assert.equal(tokens.claims()!.aud, spa.id);
    assert.equal((await bearer(tokens.access_token)).status, 200);
  });

  test('without a code challenge the request is refused to the redirect URI', async () => {
    const config = await rpConfig(t.origin, spa, 'none');
    const url = client.buildAuthorizationUrl(config, { redirect_uri: SPA_CB, scope: 'openid', state: 's1' });
    const landing = await browse(t.origin, url, await browserOf(t, alice));
    assert.equal(landing.redirect?.searchParams.get('error'), 'invalid_request');
    assert.equal(landing.redirect?.searchParams.get('state'), 's1');
    assert.equal(landing.redirect?.searchParams.get('code'), null);
  });

  test('a wrong verifier is invalid_grant', async () => {
    const config = await rpConfig(t.origin, spa, 'none');
    const req = await authorizationRequest(config, spa);
    const landing = await browse(t.origin, req.url, await browserOf(t, alice));
    const checks = { ...req.checks, pkceCodeVerifier: client.randomPKCECodeVerifier() };
    assert.equal(await oauthError(client.authorizationCodeGrant(config, landing.redirect!, checks)), 'invalid_grant');
  });

  test('introspection is for confidential clients only', async () => {
    const config = await rpConfig(t.origin, spa, 'none');
    const { tokens } = await codeFlow(t, config, spa, await browserOf(t, alice));
    assert.deepEqual(await client.tokenIntrospection(config, tokens.refresh_token!), { active: false });
    // The token itself is live: the public client still refreshes with it.
    assert.ok((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token);
  });
});

describe('clients', () => {
  test('redirect URIs are edited through the application routes; an environment redirect URL counts too', async () => {
    const token = await t.vendorToken();
    const app = await rpApp(t, { redirectUri: 'https://old.example.test/cb' });
    const path = `/applications/resources/applications/v1/${app.id}`;
    const bad = await t.call('PATCH', path, { token, body: { redirectUris: ['https://x.example.test/cb#frag'] } });
    assert.equal(bad.status, 400);
    const next = 'https://new.example.test/cb';
    const r = await t.call('PATCH', path, { token, body: { redirectUris: [next], isFirstParty: true } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.redirectUris, [next]);
    assert.equal(r.body.isFirstParty, true);
    const config = await rpConfig(t.origin, app);
    const jar = await browserOf(t, alice);
    const old = await browse(t.origin, (await authorizationRequest(config, app)).url, jar);
    assert.equal(old.status, 400, 'the removed URI is refused');
    await codeFlow(t, config, { ...app, redirectUri: next }, jar);
    const envUrl = 'https://env.example.test/done';
    const env = await t.call('POST', '/identity/resources/configurations/v1', {
      token,
      body: { allowedRedirectUrls: [envUrl] },
    });
    assert.ok(env.status < 300, JSON.stringify(env.body));
    await codeFlow(t, config, { ...app, redirectUri: envUrl }, jar);
  });

  test('after a key rotation the provider signs with the new key', async () => {
    const { kid } = await t.ctx.keys.rotate();
    const config = await rpConfig(t.origin, web);
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, alice));
    assert.equal(partsOf(tokens.id_token!, 0).kid, kid);
    assert.equal(partsOf(tokens.access_token, 0).kid, kid);
    assert.equal((await bearer(tokens.access_token)).status, 200);
  });
});

describe('bad requests', () => {
  test('an unregistered redirect_uri is an HTML 400 page, never a redirect', async () => {
    const config = await rpConfig(t.origin, web);
    const req = await authorizationRequest(config, { ...web, redirectUri: 'https://evil.example.test/cb' });
    const landing = await browse(t.origin, req.url, await browserOf(t, alice));
    assert.equal(landing.redirect, undefined);
    assert.equal(landing.status, 400);
    assert.match(landing.body, /<!doctype html>/i);
    assert.match(landing.body, /redirect_uri/);
  });

  test('an unknown client and a malformed request are 4xx pages; token errors are RFC 6749 bodies', async () => {
    const unknown = await fetch(`${t.origin}/oidc/auth?client_id=nope&response_type=code&redirect_uri=${CB}`);
    assert.equal(unknown.status, 400);
    assert.match(unknown.headers.get('content-type') ?? '', /html/);
    const noClient = await fetch(`${t.origin}/oidc/auth?response_type=code`);
    assert.equal(noClient.status, 400);
    const token = await fetch(`${t.origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'x',
        client_id: spa.id,
        redirect_uri: SPA_CB,
      }),
    });
    assert.equal(token.status, 400);
    assert.equal((await token.json()).error, 'invalid_grant');
    const json = await fetch(`${t.origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x', client_id: spa.id }),
    });
    assert.equal(json.status, 400);
    assert.equal((await json.json()).error, 'invalid_request');
  });

  test("the provider's URLs are PUBLIC_URL's whatever X-Forwarded-Host says", async () => {
    const r = await fetch(`${t.origin}/oauth/logout?client_id=${web.id}`, {
      headers: { 'x-forwarded-host': 'evil.example.test', 'x-forwarded-proto': 'https' },
    });
    assert.equal(r.status, 200);
    const body = await r.text();
    assert.match(body, new RegExp(`action="${t.origin}/oidc/session/end/confirm"`));
    assert.doesNotMatch(body, /evil\.example\.test/);
  });

  test("the platform's own refresh tokens still go to the platform's refresh", async () => {
    const s = await signedIn(t, alice);
    const r = await fetch(`${t.origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: s.refreshToken }),
    });
    assert.equal(r.status, 200);
    assert.equal(partsOf((await r.json()).access_token, 1).sid, partsOf(s.accessToken, 1).sid);
  });
});
