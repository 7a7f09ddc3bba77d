import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../helpers/authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { inputValue, PageClient } from '../helpers/page-client.ts';
import { codeIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

/** The hosted MFA step (/account/mfa) and "my account" (/account/me), driven as a browser would, over app.inject. */
let t: TestApp;
let sms: SmsServer;
let mailbox: Mailbox;
const A = '/identity/resources/auth/v1';
const U = '/identity/resources/users/v1/mfa';
const P = '/identity/resources/configurations/v1/mfa-policy';

const secretOf = (uri: string) => new URL(uri).searchParams.get('secret')!;
const login = (email: string, cookie?: string) =>
  t.call('POST', `${A}/user`, { body: { email, password: PASSWORD }, headers: cookie ? { cookie } : {} });

async function policy(tenantId: string, body: Record<string, unknown>) {
  const r = await t.call('PUT', P, {
    token: await t.vendorToken(),
    body,
    headers: { 'gatehouse-tenant-id': tenantId },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}
/** A user with an authenticator app enrolled through the self-service API. */
async function withApp(tenantId: string) {
  const u = await user(t, tenantId, { verified: true });
  const { accessToken: token } = await signedIn(t, u);
  const e = await t.call('POST', `${U}/authenticator/enroll`, { token });
  const app = new Authenticator(secretOf(e.body.uri));
  const v = await t.call('POST', `${U}/authenticator/enroll/verify`, { token, body: { token: await app.code() } });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return { ...u, app, recoveryCodes: v.body.recoveryCodes as string[] };
}
/** A page client holding the mfaToken of a password sign-in, as the sign-in page leaves it. */
async function pendingMfa(email: string) {
  const r = await login(email);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.mfaRequired, true);
  const c = new PageClient(t);
  c.setCookie('gh_mfa', r.body.mfaToken);
  return c;
}
async function nextMail(to: string, seen: number) {
  const deadline = Date.now() + 15_000;
  while (mailbox.to(to).length <= seen) {
    if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return codeIn(mailbox.to(to)[seen]);
}
/** A user of `tenantId` with a phone enrolled for SMS MFA through the self-service API. */
async function withPhone(tenantId: string, phone: string) {
  const u = await user(t, tenantId, { verified: true });
  const { accessToken: token } = await signedIn(t, u);
  const seen = sms.to(phone).length;
  const e = await t.call('POST', `${U}/sms/enroll`, { token, body: { phoneNumber: phone } });
  const v = await t.call('POST', `${U}/sms/enroll/verify`, {
    token,
    body: { otcToken: e.body.otcToken, code: await nextSms(phone, seen) },
  });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return u;
}
async function nextSms(phone: string, seen: number) {
  const deadline = Date.now() + 15_000;
  while (sms.to(phone).length <= seen) {
    if (Date.now() > deadline) throw new Error(`no SMS to ${phone}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return smsCode(sms.to(phone)[seen]);
}
/** A page client signed in through the API (its gh_refresh cookie). */
async function browserOf(u: { email: string; password?: string }) {
  const s = await signedIn(t, u);
  const c = new PageClient(t);
  c.setCookie('gh_refresh', s.cookie);
  return { c, s };
}

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100' });
  sms = await startSmsServer();
  await sms.configure(t);
  mailbox = await startMailbox();
  await mailbox.configure(t);
  const email = await t.call('POST', '/identity/resources/configurations/v1/mfa/strategies', {
    token: await t.vendorToken(),
    body: { strategy: 'EmailCode', isActive: true },
  });
  assert.equal(email.status, 201);
  for (const id of ['ap-opt', 'ap-force', 'ap-rem']) await account(t, { id });
  await policy('ap-force', { enforceMFAType: 'Force' });
  await policy('ap-rem', { allowRememberMyDevice: true, mfaDeviceExpiration: 3600 });
});
after(async () => {
  await t?.close();
  await sms?.close();
  await mailbox?.close();
});

describe('/account/mfa', () => {
  test('without the gh_mfa cookie, or with a dead mfaToken: 400 and a way back to the sign-in', async () => {
    const c = new PageClient(t);
    const r = await c.get('/account/mfa?returnTo=/somewhere');
    assert.equal(r.status, 400);
    assert.match(r.body, /href="\/account\/login\?returnTo=%2Fsomewhere"/);
    c.setCookie('gh_mfa', 'not-a-token');
    assert.equal((await c.get('/account/mfa')).status, 400);
    assert.equal(c.cookie('gh_mfa'), undefined, 'the dead cookie is cleared');
  });

  test('TOTP: renders; a wrong code re-renders with an error; the right one signs in and remembers the device', async () => {
    const u = await withApp('ap-rem');
    const c = await pendingMfa(u.email);
    const g = await c.get('/account/mfa?returnTo=/after/here');
    assert.equal(g.status, 200);
    assert.match(String(g.headers['content-security-policy']), /script-src 'self'/);
    assert.match(g.body, /<label for="f-code">/);
    assert.match(g.body, /name="rememberDevice"/);
    assert.match(g.body, /Use a recovery code/);
    const bad = await c.post('/account/mfa?returnTo=/after/here', { action: 'totp', code: '000000' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /role="alert">That code is wrong or expired/);
    assert.equal(c.cookie('gh_refresh'), undefined);
    const ok = await c.post('/account/mfa?returnTo=/after/here', {
      action: 'totp',
      code: await u.app.code(),
      rememberDevice: '1',
    });
    assert.equal(ok.status, 303, ok.body);
    assert.equal(ok.location, '/after/here');
    assert.ok(c.cookie('gh_refresh'), 'signed in');
    assert.equal(c.cookie('gh_mfa'), undefined, 'the pending step is cleared');
    const me = await c.get('/account/me');
    assert.equal(me.status, 200);
    assert.match(me.body, new RegExp(u.email));
    // The remember-device cookie: the next sign-in of this browser needs no second factor.
    const remember = [...c.jar].find(([k]) => k.startsWith('gh_mfa_'));
    assert.ok(remember, 'remember-device cookie set');
    const again = await login(u.email, `${remember[0]}=${remember[1]}`);
    assert.equal(again.status, 200);
    assert.notEqual(again.body.mfaRequired, true, JSON.stringify(again.body));
    assert.ok(again.body.accessToken);
    assert.equal((await login(u.email)).body.mfaRequired, true, 'another browser is still asked');
  });

  test('returnTo is a local path only; the mfaToken is burnt after five wrong codes', async () => {
    const u = await withApp('ap-opt');
    const c = await pendingMfa(u.email);
    await c.get('/account/mfa');
    assert.doesNotMatch((await c.get('/account/mfa')).body, /rememberDevice/, 'the policy does not allow it');
    for (const evil of ['//evil.test/x', '/\\evil.test', 'https://evil.test/']) {
      const page = await c.get(`/account/mfa?returnTo=${encodeURIComponent(evil)}`);
      assert.match(page.body, /action="\/account\/mfa\?returnTo=%2Faccount%2Fme"/, evil);
    }
    const unheld = await c.get('/account/mfa?method=sms&deviceId=00000000-0000-4000-8000-000000000000');
    assert.match(unheld.body, /code from your authenticator app/, 'a factor the user does not hold falls back');
    for (let i = 0; i < 5; i++) await c.post('/account/mfa', { action: 'totp', code: '000000' });
    const r = await c.post('/account/mfa', { action: 'totp', code: await u.app.code() });
    assert.equal(r.status, 400);
    assert.match(r.body, /sign-in expired/);
    assert.equal(c.cookie('gh_refresh'), undefined);
  });

  test('SMS: the code is sent on request, a wrong one keeps the form, the right one signs in', async () => {
    const phone = '+15555550142';
    const u = await withPhone('ap-opt', phone);
    const c = await pendingMfa(u.email);
    const g = await c.get('/account/mfa');
    assert.match(g.body, /We will text a code to \+15\*+42/);
    const deviceId = inputValue(g.body, 'deviceId')!;
    const seen = sms.to(phone).length;
    const sent = await c.post('/account/mfa', { action: 'send-sms', deviceId });
    assert.equal(sent.status, 200);
    const otcToken = inputValue(sent.body, 'otcToken')!;
    const code = await nextSms(phone, seen);
    const wrong = await c.post('/account/mfa', {
      action: 'sms',
      deviceId,
      otcToken,
      code: code === '111111' ? '222222' : '111111',
    });
    assert.equal(wrong.status, 400);
    assert.equal(inputValue(wrong.body, 'otcToken'), otcToken, 'the same code may be typed again');
    const ok = await c.post('/account/mfa', { action: 'sms', deviceId, otcToken, code });
    assert.equal(ok.status, 303, ok.body);
    assert.equal(ok.location, '/account/me');
  });

  test('email code: offered next to the app for a verified address; sent, verified, signed in', async () => {
    const u = await withApp('ap-opt');
    const c = await pendingMfa(u.email);
    const g = await c.get('/account/mfa?returnTo=/account/me');
    const [name, domain] = u.email.split('@');
    assert.ok(g.body.includes(`Email a code to ${name[0]}${'*'.repeat(name.length - 1)}@${domain}`), g.body);
    await c.get('/account/mfa?returnTo=/account/me&method=email');
    const seen = mailbox.to(u.email).length;
    const sent = await c.post('/account/mfa?returnTo=/account/me', { action: 'send-email' });
    assert.equal(sent.status, 200);
    assert.match(sent.body, /We emailed a code/);
    const otcToken = inputValue(sent.body, 'otcToken')!;
    const code = await nextMail(u.email, seen);
    const ok = await c.post('/account/mfa?returnTo=/account/me', { action: 'email', otcToken, code });
    assert.equal(ok.status, 303, ok.body);
    assert.ok(c.cookie('gh_refresh'));
  });

  test('a recovery code removes the factors: not forced, back to the sign-in', async () => {
    const u = await withApp('ap-opt');
    const c = await pendingMfa(u.email);
    await c.get('/account/mfa?method=recovery');
    const bad = await c.post('/account/mfa', { action: 'recover', code: 'aaaa-bbbb-cccc' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /recovery code is not right/);
    const ok = await c.post('/account/mfa', { action: 'recover', code: u.recoveryCodes[0] });
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /second factors were removed/);
    assert.equal(c.cookie('gh_mfa'), undefined);
    const again = await login(u.email);
    assert.ok(again.body.accessToken, 'no second factor any more');
  });

  test('forced enrolment: QR code and secret, a wrong code keeps them, recovery codes once, signed in', async () => {
    const u = await user(t, 'ap-force', { verified: true });
    const c = await pendingMfa(u.email);
    const g = await c.get('/account/mfa?returnTo=/account/me');
    assert.equal(g.status, 200);
    assert.match(g.body, /<img class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+"/);
    const uri = inputValue(g.body, 'uri')!;
    const secret = secretOf(uri);
    assert.match(g.body, new RegExp(`<code class="secret"[^>]*>${secret}</code>`));
    const app = new Authenticator(secret);
    const bad = await c.post('/account/mfa?returnTo=/account/me', { action: 'enroll', uri, code: '000000' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, new RegExp(secret), 'the same secret');
    const ok = await c.post('/account/mfa?returnTo=/account/me', { action: 'enroll', uri, code: await app.code() });
    assert.equal(ok.status, 200, ok.body);
    const codes = [...ok.body.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]);
    assert.equal(codes.length, 10);
    assert.match(ok.body, /href="\/account\/me"/);
    assert.ok(c.cookie('gh_refresh'));
    assert.equal((await c.get('/account/me')).status, 200);
    // The next sign-in asks for the app enrolled here.
    const next = await pendingMfa(u.email);
    await next.get('/account/mfa');
    assert.equal((await next.post('/account/mfa', { action: 'totp', code: await app.code() })).status, 303);
  });

  test('CSRF: no token is 403, a cross-site post is 403; nothing is verified', async () => {
    const u = await withApp('ap-opt');
    const c = await pendingMfa(u.email);
    await c.get('/account/mfa');
    const code = await u.app.code();
    const none = await c.post('/account/mfa', { action: 'totp', code }, { csrf: false });
    assert.equal(none.status, 403);
    const cross = await c.post('/account/mfa', { action: 'totp', code }, { site: 'cross-site' });
    assert.equal(cross.status, 403);
    assert.equal(c.cookie('gh_refresh'), undefined);
    const ok = await c.post('/account/mfa', { action: 'totp', code: await u.app.code() });
    assert.equal(ok.status, 303, 'the pending sign-in was untouched');
  });
});

describe('/account/me', () => {
  test('without a session: 303 to the sign-in page', async () => {
    const r = await new PageClient(t).get('/account/me');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/account/login?returnTo=%2Faccount%2Fme');
    const c = new PageClient(t);
    c.setCookie('gh_refresh', 'nonsense');
    assert.equal((await c.get('/account/me')).status, 303);
  });

  test('profile: the name is saved; CSRF and cross-site posts are 403', async () => {
    const u = await user(t, 'ap-opt', { name: 'Ada Before' });
    const { c } = await browserOf(u);
    const g = await c.get('/account/me');
    assert.equal(g.status, 200);
    assert.equal(inputValue(g.body, 'name'), 'Ada Before');
    assert.match(g.body, /<label for="f-name">Name<\/label>/);
    assert.equal((await c.post('/account/me/profile', { name: 'X' }, { csrf: false })).status, 403);
    assert.equal((await c.post('/account/me/profile', { name: 'X' }, { site: 'cross-site' })).status, 403);
    const r = await c.post('/account/me/profile', { name: 'Ada <Lovelace>' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/account/me?done=profile');
    const after = await c.get(r.location!);
    assert.match(after.body, /Your profile was saved/);
    assert.match(after.body, /value="Ada &lt;Lovelace&gt;"/, 'escaped');
  });

  test('password: a wrong current one is refused and counted; the change ends the other sessions', async () => {
    const u = await user(t, 'ap-opt');
    const { c } = await browserOf(u);
    const other = await signedIn(t, u);
    await c.get('/account/me');
    const wrong = await c.post('/account/me/password', { password: 'not it', newPassword: 'a new long passphrase 1' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body, /current password is not right/);
    const { rows } = await t.db.query('SELECT failed_attempts FROM users WHERE id = $1', [u.id]);
    assert.equal(rows[0].failed_attempts, 1, 'counted as a failed sign-in');
    const ok = await c.post('/account/me/password', { password: PASSWORD, newPassword: 'a new long passphrase 1' });
    assert.equal(ok.status, 303, ok.body);
    assert.equal((await c.get('/account/me')).status, 200, 'this session stays');
    const refresh = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: other.refreshToken } });
    assert.equal(refresh.status, 401, 'the other session ended');
    assert.ok((await signedIn(t, u, { password: 'a new long passphrase 1' })).accessToken);
  });

  test('sessions: listed with the current one marked; sign out one, then all others', async () => {
    const u = await user(t, 'ap-opt');
    const { c, s } = await browserOf(u);
    const second = await signedIn(t, u);
    const third = await signedIn(t, u);
    const g = await c.get('/account/me');
    assert.match(g.body, /aria-current="true"><span>[^<]*<br><span class="muted">Last active/);
    assert.match(g.body, /This device/);
    const ids = [...g.body.matchAll(/name="sessionId" value="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(ids.length, 2, 'the two other sessions have a sign-out button');
    const one = await c.post('/account/me/sessions/revoke', { sessionId: ids[0] });
    assert.equal(one.status, 303);
    const mine = await t.call('GET', '/identity/resources/users/sessions/v1/me', { token: s.accessToken });
    assert.equal(mine.body.length, 2);
    const unknown = await c.post('/account/me/sessions/revoke', { sessionId: ids[0] });
    assert.equal(unknown.status, 404, 'already signed out');
    const all = await c.post('/account/me/sessions/others', {});
    assert.equal(all.status, 303);
    const left = await t.call('GET', '/identity/resources/users/sessions/v1/me', { token: s.accessToken });
    assert.deepEqual(
      left.body.map((x: { current: boolean }) => x.current),
      [true],
    );
    for (const x of [second, third])
      assert.equal(
        (await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: x.refreshToken } })).status,
        401,
      );
  });

  test('second factors: add an authenticator app, remove it with a current code', async () => {
    const u = await user(t, 'ap-opt', { verified: true });
    const { c } = await browserOf(u);
    assert.match((await c.get('/account/me')).body, /No second factor is set up/);
    const e = await c.post('/account/me/mfa/add', {});
    assert.equal(e.status, 200);
    assert.match(e.body, /src="data:image\/png;base64,/);
    const uri = inputValue(e.body, 'uri')!;
    const app = new Authenticator(secretOf(uri));
    const bad = await c.post('/account/me/mfa/add/verify', { uri, code: '000000' });
    assert.equal(bad.status, 400);
    const ok = await c.post('/account/me/mfa/add/verify', { uri, code: await app.code() });
    assert.equal(ok.status, 200);
    assert.equal([...ok.body.matchAll(/<li><code>/g)].length, 10);
    const g = await c.get('/account/me?done=mfa-added');
    assert.match(g.body, /The authenticator app was added/);
    const deviceId = /name="kind" value="authenticator"><input type="hidden" name="deviceId" value="([^"]+)"/.exec(
      g.body,
    )?.[1];
    assert.ok(deviceId);
    const ask = await c.post('/account/me/mfa/remove', { kind: 'authenticator', deviceId });
    assert.equal(ask.status, 200);
    assert.match(ask.body, /enter a current code/);
    const wrong = await c.post('/account/me/mfa/remove/verify', { kind: 'authenticator', deviceId, code: '000000' });
    assert.equal(wrong.status, 400);
    const done = await c.post('/account/me/mfa/remove/verify', {
      kind: 'authenticator',
      deviceId,
      code: await app.code(),
    });
    assert.equal(done.status, 303, done.body);
    assert.match((await c.get(done.location!)).body, /No second factor is set up/);
  });

  test('second factors: a phone is removed with the code texted to it', async () => {
    const phone = '+15555550177';
    const u = await withPhone('ap-opt', phone);
    // Signed in with the phone as second factor, through the API.
    const r = await login(u.email);
    let seen = sms.to(phone).length;
    const deviceId = r.body.mfaDevices.phones[0].id;
    const send = await t.call('POST', `${A}/user/mfa/sms/${deviceId}`, { body: { mfaToken: r.body.mfaToken } });
    const v = await t.call('POST', `${A}/user/mfa/sms/${deviceId}/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: send.body.otcToken, code: await nextSms(phone, seen) },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const c = new PageClient(t);
    c.setCookie('gh_refresh', /gh_refresh=([^;]*)/.exec(String(v.headers['set-cookie']))![1]);
    assert.match((await c.get('/account/me')).body, /Text messages to \+15555550177/);
    seen = sms.to(phone).length;
    const ask = await c.post('/account/me/mfa/remove', { kind: 'sms', deviceId });
    assert.equal(ask.status, 200);
    assert.match(ask.body, /We texted a code to \+15\*+77/);
    const otcToken = inputValue(ask.body, 'otcToken')!;
    const code = await nextSms(phone, seen);
    const wrong = code === '111111' ? '222222' : '111111';
    const bad = await c.post('/account/me/mfa/remove/verify', { kind: 'sms', deviceId, otcToken, code: wrong });
    assert.equal(bad.status, 400);
    assert.equal(inputValue(bad.body, 'otcToken'), otcToken);
    const ok = await c.post('/account/me/mfa/remove/verify', { kind: 'sms', deviceId, otcToken, code });
    assert.equal(ok.status, 303, ok.body);
    assert.match((await c.get('/account/me?done=mfa-removed')).body, /No second factor is set up/);
  });

  test('second factors need a recent sign-in: the password confirms it (step-up), a wrong one is refused', async () => {
    const u = await user(t, 'ap-opt');
    const { c } = await browserOf(u);
    await t.db.query("UPDATE sessions SET auth_time = now() - interval '1 hour' WHERE user_id = $1", [u.id]);
    const g = await c.get('/account/me');
    assert.match(g.body, /Confirm your password to change your second factors/);
    assert.doesNotMatch(g.body, /Add an authenticator app/);
    const refused = await c.post('/account/me/mfa/add', {});
    assert.equal(refused.status, 403);
    const wrong = await c.post('/account/me/confirm', { confirmPassword: 'nope' });
    assert.equal(wrong.status, 400);
    const before = c.cookie('gh_refresh');
    const ok = await c.post('/account/me/confirm', { confirmPassword: PASSWORD });
    assert.equal(ok.status, 303, ok.body);
    assert.notEqual(c.cookie('gh_refresh'), before, 'the step-up rotated the refresh token');
    assert.match((await c.get('/account/me')).body, /Add an authenticator app/);
    assert.equal((await c.post('/account/me/mfa/add', {})).status, 200);
  });
});
