import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { startBrowserApp, type BrowserApp } from '../helpers/browser.ts';
import { account, signedIn, user, type User } from '../fixtures/builders.ts';
import {
  authorizationRequest,
  browse,
  browserOf,
  codeFlow,
  Jar,
  partsOf,
  rpApp,
  rpConfig,
  submit,
} from '../fixtures/oidc-rp.ts';
import type { RpApp } from '../fixtures/oidc-rp.ts';
import { Authenticator } from '../helpers/authenticator.ts';
import { ACR_MFA } from '../../src/modules/mfa/index.ts';

let t: BrowserApp;
let web: RpApp;
let alice: User;
let bob: User;
let second: string;
const CB = 'https://rp.example.test/callback';
const ME = '/identity/resources/users/v2/me';

const bearer = (token: string) => fetch(`${t.origin}${ME}`, { headers: { authorization: `Bearer ${token}` } });

/** The hosted sign-in page's part: a fresh sign-in puts a new gh_refresh in the browser. */
async function signInAgain(jar: Jar, who: User) {
  jar.cookies.set('gh_refresh', (await signedIn(t, who)).cookie);
}

before(async () => {
  t = await startBrowserApp({ OIDC_PROVIDER_ENABLED: 'true' });
  const acc = await account(t, { name: 'First account' });
  alice = await user(t, acc, { verified: true });
  bob = await user(t, acc, { verified: true });
  second = (await account(t, { name: 'Second account' })).id;
  const add = await t.call('POST', `/identity/resources/users/v1/${bob.id}/tenant`, {
    token: await t.vendorToken(),
    body: { tenantId: second },
  });
  assert.equal(add.status, 201, JSON.stringify(add.body));
  web = await rpApp(t, { redirectUri: CB });
});
after(async () => t?.close());

describe('prompt and max_age', () => {
  test('prompt=none without a browser session is login_required at the redirect URI', async () => {
    const config = await rpConfig(t.origin, web);
    const req = await authorizationRequest(config, web, { prompt: 'none' });
    const landing = await browse(t.origin, req.url, new Jar());
    assert.equal(landing.redirect?.origin, new URL(CB).origin);
    assert.equal(landing.redirect?.searchParams.get('error'), 'login_required');
  });

  test('without a browser session the user is sent to the sign-in page and comes back to finish', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = new Jar();
    const req = await authorizationRequest(config, web, { login_hint: alice.email, ui_locales: 'en' });
    const toLogin = await browse(t.origin, req.url, jar);
    assert.equal(toLogin.redirect?.pathname, '/account/login');
    const returnTo = toLogin.redirect!.searchParams.get('returnTo')!;
    assert.match(returnTo, /^\/oidc\/interaction\/[\w-]+$/);
    assert.equal(toLogin.redirect!.searchParams.get('login_hint'), alice.email);
    assert.equal(toLogin.redirect!.searchParams.get('prompt'), null);
    await signInAgain(jar, alice);
    const landing = await browse(t.origin, returnTo, jar);
    const tokens = await client.authorizationCodeGrant(config, landing.redirect!, req.checks);
    assert.equal(tokens.claims()!.sub, alice.id);
  });

  test('prompt=login sends a signed-in user to sign in again; the new session is the one used', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = await browserOf(t, alice);
    const first = await codeFlow(t, config, web, jar);
    const req = await authorizationRequest(config, web, { prompt: 'login' });
    const toLogin = await browse(t.origin, req.url, jar);
    assert.equal(toLogin.redirect?.pathname, '/account/login');
    assert.equal(toLogin.redirect!.searchParams.get('prompt'), 'login');
    await sleep(1100);
    await signInAgain(jar, alice);
    const landing = await browse(t.origin, toLogin.redirect!.searchParams.get('returnTo')!, jar);
    const tokens = await client.authorizationCodeGrant(config, landing.redirect!, req.checks);
    assert.ok(tokens.claims()!.auth_time! > first.tokens.claims()!.auth_time!);
    assert.notEqual(partsOf(tokens.access_token, 1).sid, partsOf(first.tokens.access_token, 1).sid);
  });

  test('max_age older than the sign-in asks for a new one', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = await browserOf(t, alice);
    await codeFlow(t, config, web, jar, { max_age: '60' });
    await sleep(2100);
    const req = await authorizationRequest(config, web, { max_age: '1' });
    const toLogin = await browse(t.origin, req.url, jar);
    assert.equal(toLogin.redirect?.pathname, '/account/login');
    await signInAgain(jar, alice);
    const landing = await browse(t.origin, toLogin.redirect!.searchParams.get('returnTo')!, jar);
    const tokens = await client.authorizationCodeGrant(config, landing.redirect!, { ...req.checks, maxAge: 1 });
    assert.ok(Date.now() / 1000 - tokens.claims()!.auth_time! < 3);
  });
});

describe('accounts', () => {
  test('a user of several accounts picks one; the tokens are for it', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = await browserOf(t, bob);
    const req = await authorizationRequest(config, web);
    const picker = await browse(t.origin, req.url, jar);
    assert.equal(picker.status, 200);
    assert.match(picker.body, /Choose an account/);
    assert.match(picker.body, /Second account/);
    assert.match(picker.body, /First account/);
    const landing = await submit(t.origin, picker, jar, { tenantId: second });
    const tokens = await client.authorizationCodeGrant(config, landing.redirect!, req.checks);
    assert.equal(partsOf(tokens.access_token, 1).tenantId, second);
    assert.equal((await bearer(tokens.access_token)).status, 200);
  });

  test('account_hint chooses without the picker', async () => {
    const config = await rpConfig(t.origin, web);
    const { tokens } = await codeFlow(t, config, web, await browserOf(t, bob), { account_hint: bob.tenantId });
    assert.equal(partsOf(tokens.access_token, 1).tenantId, bob.tenantId);
  });
});

describe('consent', () => {
  test('a third-party application asks; allow issues a code, deny is access_denied', async () => {
    const third = await rpApp(t, { redirectUri: 'https://third.example.test/cb', isFirstParty: false, name: 'Third' });
    const config = await rpConfig(t.origin, third);
    const jar = await browserOf(t, alice);
    const denied = await authorizationRequest(config, third);
    const page = await browse(t.origin, denied.url, jar);
    assert.equal(page.status, 200);
    assert.match(page.body, /Third asks for access/);
    const no = await submit(t.origin, page, jar, { decision: 'deny' });
    assert.equal(no.redirect?.searchParams.get('error'), 'access_denied');
    const req = await authorizationRequest(config, third);
    const again = await browse(t.origin, req.url, jar);
    const yes = await submit(t.origin, again, jar, { decision: 'allow' });
    const tokens = await client.authorizationCodeGrant(config, yes.redirect!, req.checks);
    assert.equal(tokens.claims()!.sub, alice.id);
    // Consent is kept: the next request goes straight to the application.
    const { tokens: next } = await codeFlow(t, config, third, jar);
    assert.equal(next.claims()!.sub, alice.id);
  });
});

describe('logout', () => {
  test('RP-initiated logout asks, ends the Gatehouse session too, and returns to post_logout_redirect_uri', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = await browserOf(t, alice);
    const { tokens } = await codeFlow(t, config, web, jar);
    assert.equal((await bearer(tokens.access_token)).status, 200);
    const url = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: CB,
      state: 'bye',
    });
    assert.equal(url.pathname, '/oauth/logout');
    const question = await browse(t.origin, url, jar);
    assert.equal(question.status, 200);
    assert.match(question.body, /Sign out/);
    assert.doesNotMatch(question.body, /<script>/);
    const back = await submit(t.origin, question, jar, { logout: 'yes' });
    assert.equal(back.redirect?.origin + back.redirect!.pathname, CB);
    assert.equal(back.redirect!.searchParams.get('state'), 'bye');
    assert.equal(jar.cookies.has('gh_refresh'), false);
    assert.equal((await bearer(tokens.access_token)).status, 401);
    assert.equal(
      (await client.refreshTokenGrant(config, tokens.refresh_token!).catch((e) => e)).error,
      'invalid_grant',
    );
    const silent = await browse(t.origin, (await authorizationRequest(config, web, { prompt: 'none' })).url, jar);
    assert.equal(silent.redirect?.searchParams.get('error'), 'login_required');
  });

  test('an API logout of the browser session refuses the tokens and makes prompt=none login_required', async () => {
    const config = await rpConfig(t.origin, web);
    const jar = await browserOf(t, alice);
    const { tokens } = await codeFlow(t, config, web, jar);
    const out = await fetch(`${t.origin}/oauth/logout`, { headers: { cookie: jar.header() } });
    assert.equal(out.status, 200);
    assert.equal((await bearer(tokens.access_token)).status, 401);
    jar.cookies.delete('gh_refresh');
    const silent = await browse(t.origin, (await authorizationRequest(config, web, { prompt: 'none' })).url, jar);
    assert.equal(silent.redirect?.searchParams.get('error'), 'login_required');
  });
});

describe('housekeeping', () => {
  test("the provider's expired rows are purged; live ones stay", async () => {
    const config = await rpConfig(t.origin, web);
    await codeFlow(t, config, web, await browserOf(t, alice));
    const count = async () =>
      Number((await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oidc_payloads')).rows[0]!.n);
    const before = await count();
    assert.ok(before > 0);
    await t.ctx.db.query(
      `INSERT INTO oidc_payloads (id, kind, payload, expires_at) VALUES ('gone', 'AuthorizationCode', '{}', now() - interval '1 second')`,
    );
    const removed = await t.ctx.housekeeping.purge();
    assert.equal(removed.oidc_payloads, 1);
    assert.equal(await count(), before);
  });
});

describe('acr_values', () => {
  test('asking for multi-factor sends a one-factor session through the step-up page; the tokens then carry it', async () => {
    const acc = await account(t, { name: 'Step-up account' });
    const carol = await user(t, acc, { verified: true });
    const config = await rpConfig(t.origin, web);
    // Signed in with the password alone, then an authenticator app enrolled (by the vendor): the session has one factor.
    const jar = await browserOf(t, carol);
    const H = { 'gatehouse-tenant-id': acc.id, 'gatehouse-user-id': carol.id };
    const vendor = await t.vendorToken();
    const e = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll', {
      token: vendor,
      headers: H,
    });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    const app = new Authenticator(new URL(e.body.uri).searchParams.get('secret')!);
    const v = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll/verify', {
      token: vendor,
      headers: H,
      body: { token: await app.code() },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));

    const plain = await codeFlow(t, config, web, jar);
    assert.equal(plain.tokens.claims()!.acr, 'urn:gatehouse:acr:single-factor');

    const req = await authorizationRequest(config, web, { acr_values: ACR_MFA });
    const stepUp = await browse(t.origin, req.url, jar);
    assert.equal(stepUp.url.pathname, '/account/step-up');
    assert.equal(stepUp.status, 200);
    const wrong = await submit(t.origin, stepUp, jar, { code: '000000' });
    assert.equal(wrong.status, 400, 'a wrong code shows the page again');
    const back = await submit(t.origin, stepUp, jar, { code: await app.code() });
    assert.ok(back.redirect?.href.startsWith(CB), `${back.status} ${back.body.slice(0, 300)}`);
    const tokens = await client.authorizationCodeGrant(config, back.redirect!, req.checks);
    assert.equal(tokens.claims()!.acr, ACR_MFA);
    assert.ok((tokens.claims()!.amr as string[]).includes('mfa'));
    assert.equal(partsOf(tokens.access_token, 1).acr, ACR_MFA);
  });
});
