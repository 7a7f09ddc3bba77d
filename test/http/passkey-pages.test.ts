import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import { SoftwareAuthenticator } from '../fixtures/webauthn-authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { inputValue, PageClient } from '../helpers/page-client.ts';

/** The passkey pages (/account/me, /account/login, /account/mfa), driven as a browser with its script would. */
let t: TestApp;
let key: SoftwareAuthenticator;
let email: string;
const STRATEGIES = '/identity/resources/configurations/v1/mfa/strategies';

/** A page client signed in with the password form of /account/login. */
async function signedInPage(who: string) {
  const c = new PageClient(t);
  await c.get('/account/login');
  const r = await c.post('/account/login', { email: who, password: PASSWORD, returnTo: '/account/me' });
  assert.equal(r.status, 303, r.body);
  return { c, r };
}
/** What passkeys.js does: post the form's fields (CSRF token included) to the options URL, read JSON. */
async function optionsOf(c: PageClient, url: string, fields: Record<string, string> = {}) {
  const r = await c.post(url, fields);
  assert.equal(r.status, 200, r.body);
  assert.match(String(r.headers['content-type']), /application\/json/);
  return JSON.parse(r.body);
}
async function strategy(name: string, isActive: boolean) {
  const r = await t.call('POST', STRATEGIES, { token: await t.vendorToken(), body: { strategy: name, isActive } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '1000' });
  key = new SoftwareAuthenticator({ origin: t.ctx.config.webauthn.origins[0] });
  await account(t, { id: 'pk-pages' });
  ({ email } = await user(t, 'pk-pages', { verified: true }));
});
after(async () => t?.close());

describe('passkey pages', () => {
  test('the options endpoints need the CSRF token, a same-site post and a session (or a pending MFA step)', async () => {
    const anon = new PageClient(t);
    const login = await anon.get('/account/login');
    assert.match(login.body, /data-passkey="get" data-options-url="\/account\/login\/passkey\/options" hidden/);
    assert.match(login.body, /<script src="\/account\/assets\/passkeys.js" defer><\/script>/);
    assert.match(login.body, /data-passkey-nojs>Passkeys need a browser with JavaScript/);
    assert.equal((await anon.post('/account/passkeys/options', {})).status, 401, 'no session');
    assert.equal((await anon.post('/account/mfa/passkey/options', { deviceId: crypto.randomUUID() })).status, 401);
    assert.equal((await anon.post('/account/login/passkey/options', {}, { csrf: false })).status, 403);
    const crossSite = await anon.post('/account/login/passkey/options', {}, { site: 'cross-site' });
    assert.equal(crossSite.status, 403);
    const o = await optionsOf(anon, '/account/login/passkey/options');
    assert.deepEqual(o.allowCredentials, [], 'discoverable credentials');
    assert.equal(o.rpId, t.ctx.config.webauthn.rpId);

    const { c } = await signedInPage(email);
    await c.get('/account/me');
    assert.equal((await c.post('/account/passkeys/options', {}, { csrf: false })).status, 403);
    assert.equal((await c.post('/account/passkeys/options', {}, { site: 'cross-site' })).status, 403);
    const reg = await optionsOf(c, '/account/passkeys/options', { name: 'x' });
    assert.equal(reg.rp.id, t.ctx.config.webauthn.rpId);
    assert.equal(reg.user.name, email);
    const asset = await anon.get('/account/assets/passkeys.js');
    assert.equal(asset.status, 200);
    assert.match(String(asset.headers['content-type']), /text\/javascript/);
    assert.ok(asset.body.length < 4096, `passkeys.js is ${asset.body.length} bytes`);
  });

  test('a passkey registered through the /account/me form is listed; a bad answer is a 4xx page', async () => {
    const { c } = await signedInPage(email);
    const me = await c.get('/account/me');
    assert.match(me.body, /<section id="passkeys"/);
    assert.match(me.body, /No passkey is set up\./);
    assert.match(me.body, /data-passkey="create" data-options-url="\/account\/passkeys\/options"/);

    const garbage = await c.post('/account/passkeys', { name: 'Bad', response: '{"id":"x"}' });
    assert.equal(garbage.status, 400, garbage.body);
    assert.match(garbage.body, /id="passkeys"[\s\S]*The passkey could not be verified/);
    assert.equal((await c.post('/account/passkeys', { name: 'None' })).status, 400, 'no response at all');

    const options = await optionsOf(c, '/account/passkeys/options');
    const cred = key.create(options);
    const r = await c.post('/account/passkeys', { name: 'My laptop', response: JSON.stringify(cred) });
    assert.equal(r.status, 303, r.body);
    assert.equal(r.location, '/account/me?done=passkey-added#passkeys');
    const after = await c.get('/account/me?done=passkey-added');
    assert.match(after.body, /The passkey was added\./);
    assert.match(after.body, /My laptop<br><span class="muted">Added [^<]*, last used never/);

    // The same answer again: its challenge is spent.
    const replay = await c.post('/account/passkeys', { name: 'Again', response: JSON.stringify(cred) });
    assert.equal(replay.status, 400);
    assert.match(replay.body, /This passkey request expired/);
  });

  test('passkey sign-in from /account/login sets gh_refresh and goes to returnTo; bad answers are 4xx', async () => {
    const c = new PageClient(t);
    await c.get('/account/login?returnTo=/account/me');
    const missing = await c.post('/account/login/passkey', { returnTo: '/account/me' });
    assert.equal(missing.status, 400);
    assert.match(missing.body, /The passkey could not be verified/);
    assert.equal((await c.post('/account/login/passkey', { response: 'not json' })).status, 400);
    const forged = key.get(await optionsOf(c, '/account/login/passkey/options'), { badSignature: true });
    const bad = await c.post('/account/login/passkey', { response: JSON.stringify(forged) });
    assert.equal(bad.status, 400);
    assert.equal(c.cookie('gh_refresh'), undefined);
    const crossSite = await c.post(
      '/account/login/passkey',
      { response: JSON.stringify(forged) },
      { site: 'cross-site' },
    );
    assert.equal(crossSite.status, 403);

    const stranger = new SoftwareAuthenticator({ origin: key.o.origin });
    stranger.create({ rp: { id: t.ctx.config.webauthn.rpId }, user: { id: 'eA' }, challenge: 'eA' });
    const unknown = stranger.get(await optionsOf(c, '/account/login/passkey/options'));
    const u = await c.post('/account/login/passkey', { response: JSON.stringify(unknown) });
    assert.equal(u.status, 400);
    assert.match(u.body, /This passkey is not known here/);

    const assertion = key.get(await optionsOf(c, '/account/login/passkey/options'));
    const r = await c.post('/account/login/passkey', { response: JSON.stringify(assertion), returnTo: '/account/me' });
    assert.equal(r.status, 303, r.body);
    assert.equal(r.location, '/account/me');
    assert.ok(c.cookie('gh_refresh'));
    const me = await c.get('/account/me');
    assert.equal(me.status, 200);
    assert.ok(me.body.includes(email));
    assert.doesNotMatch(me.body, /last used never/);
  });

  test('a passkey removed from /account/me is gone', async () => {
    const { c } = await signedInPage(email);
    const me = await c.get('/account/me');
    const deviceId = /action="\/account\/passkeys\/remove">[\s\S]*?name="deviceId" value="([^"]+)"/.exec(me.body)?.[1];
    assert.ok(deviceId, me.body);
    const extra = key.create(await optionsOf(c, '/account/passkeys/options'));
    assert.equal((await c.post('/account/passkeys', { response: JSON.stringify(extra) })).status, 303);
    assert.equal((await c.post('/account/passkeys/remove', { deviceId }, { site: 'cross-site' })).status, 403);
    const r = await c.post('/account/passkeys/remove', { deviceId });
    assert.equal(r.status, 303, r.body);
    assert.equal(r.location, '/account/me?done=passkey-removed#passkeys');
    const after = await c.get('/account/me');
    assert.doesNotMatch(after.body, /My laptop/);
    assert.match(after.body, /<span>Passkey<br>/, 'the other passkey (default name) stays');
    const again = await c.post('/account/passkeys/remove', { deviceId });
    assert.equal(again.status, 404);
  });

  test('with WebAuthn MFA on, /account/mfa offers the passkey and finishes the sign-in with it', async () => {
    await strategy('WebAuthnPlatform', true);
    try {
      const { c, r } = await signedInPage(email);
      assert.match(r.location ?? '', /^\/account\/mfa\?returnTo=%2Faccount%2Fme/);
      const page = await c.get(r.location as string);
      assert.equal(page.status, 200);
      assert.match(page.body, /data-passkey="get" data-options-url="\/account\/mfa\/passkey\/options"/);
      assert.match(page.body, /Use your security key or passkey/);
      assert.match(page.body, /passkeys\.js/);
      const deviceId = inputValue(page.body, 'deviceId') as string;
      const action = `/account/mfa?returnTo=${encodeURIComponent('/account/me')}`;

      const wrong = await c.post(action, { action: 'passkey', deviceId, webauthnToken: 'x', response: '[]' });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body, /The passkey could not be verified[\s\S]*data-passkey="get"/);

      const o = await optionsOf(c, '/account/mfa/passkey/options', { deviceId });
      assert.equal(o.webauthnToken, o.options.challenge);
      const forged = key.get(o.options, { badSignature: true });
      const bad = await c.post(action, {
        action: 'passkey',
        deviceId,
        webauthnToken: o.webauthnToken,
        response: JSON.stringify(forged),
      });
      assert.equal(bad.status, 400);
      assert.ok(c.cookie('gh_mfa'), 'the pending sign-in stays');

      const o2 = await optionsOf(c, '/account/mfa/passkey/options', { deviceId });
      const done = await c.post(action, {
        action: 'passkey',
        deviceId,
        webauthnToken: o2.webauthnToken,
        response: JSON.stringify(key.get(o2.options)),
      });
      assert.equal(done.status, 303, done.body);
      assert.equal(done.location, '/account/me');
      assert.ok(c.cookie('gh_refresh'));
      assert.equal(c.cookie('gh_mfa'), undefined);
    } finally {
      await strategy('WebAuthnPlatform', false);
    }
  });

  test('a passkey without user verification signs in to the MFA step (gh_mfa), which it then finishes', async () => {
    const { email: other } = await user(t, 'pk-pages', { verified: true });
    const pin = new SoftwareAuthenticator({ origin: key.o.origin, uv: false });
    const { c: owner } = await signedInPage(other);
    await owner.get('/account/me');
    const cred = pin.create(await optionsOf(owner, '/account/passkeys/options'));
    assert.equal((await owner.post('/account/passkeys', { response: JSON.stringify(cred) })).status, 303);
    await strategy('WebAuthnPlatform', true);
    try {
      const c = new PageClient(t);
      await c.get('/account/login');
      const assertion = pin.get(await optionsOf(c, '/account/login/passkey/options'));
      const r = await c.post('/account/login/passkey', {
        response: JSON.stringify(assertion),
        returnTo: '/account/me',
      });
      assert.equal(r.status, 303, r.body);
      assert.equal(r.location, '/account/mfa?returnTo=%2Faccount%2Fme');
      assert.ok(c.cookie('gh_mfa'));
      assert.equal(c.cookie('gh_refresh'), undefined, 'no session before the second step');
      const page = await c.get(r.location as string);
      const deviceId = inputValue(page.body, 'deviceId') as string;
      const o = await optionsOf(c, '/account/mfa/passkey/options', { deviceId });
      const done = await c.post(r.location as string, {
        action: 'passkey',
        deviceId,
        webauthnToken: o.webauthnToken,
        response: JSON.stringify(pin.get(o.options)),
      });
      assert.equal(done.status, 303, done.body);
      assert.ok(c.cookie('gh_refresh'));
    } finally {
      await strategy('WebAuthnPlatform', false);
    }
  });
});

describe('passkey changes need a recent sign-in', () => {
  let old: TestApp;
  before(async () => {
    old = await startTestApp({ RECENT_AUTH_MAX_AGE: '1' });
    await account(old, { id: 'pk-old' });
  });
  after(async () => old?.close());

  test('an older sign-in lists passkeys but neither adds nor removes one until it is confirmed', async () => {
    const u = await user(old, 'pk-old', { verified: true });
    const c = new PageClient(old);
    await c.get('/account/login');
    assert.equal((await c.post('/account/login', { email: u.email, password: PASSWORD })).status, 303);
    const fresh = await c.get('/account/me');
    assert.match(fresh.body, /data-passkey="create"/);
    const cred = new SoftwareAuthenticator({ origin: old.ctx.config.webauthn.origins[0] }).create(
      await optionsOf(c, '/account/passkeys/options'),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const me = await c.get('/account/me');
    assert.doesNotMatch(me.body, /data-passkey="create"/);
    assert.match(me.body, /<a href="#mfa">To add or remove a passkey, confirm your password/);
    assert.equal((await c.post('/account/passkeys/options', {})).status, 403);
    const r = await c.post('/account/passkeys', { response: JSON.stringify(cred) });
    assert.equal(r.status, 403);
    assert.match(r.body, /id="passkeys"[\s\S]*confirm your password first/);
    const remove = await c.post('/account/passkeys/remove', { deviceId: crypto.randomUUID() });
    assert.equal(remove.status, 403);
    // The password confirmation of the account pages makes the sign-in recent again.
    assert.equal((await c.post('/account/me/confirm', { confirmPassword: PASSWORD })).status, 303);
    assert.match((await c.get('/account/me')).body, /data-passkey="create"/);
  });
});
