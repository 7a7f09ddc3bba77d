import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { account, PASSWORD, user } from '../fixtures/builders.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { linkIn, codeIn, startMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';
import { hiddenFields, PageClient, unlabelledInputs } from '../helpers/pages.ts';
import { smsCode, startSmsServer } from '../helpers/sms-server.ts';

const C = '/identity/resources/configurations/v1';
const ACC = 'sp-acme';
let t: TestApp;
let vendor: string;
let mailbox: Mailbox;

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000', LOGIN_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  await account(t, { id: ACC, name: 'Acme' });
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

/** The newest mail to `email` with `subject` (waits for the count to exceed `seen`). */
async function mailTo(email: string, subject: RegExp, seen = 0): Promise<Mail> {
  const pick = () => mailbox.to(email).filter((m) => subject.test(m.subject));
  await mailbox.waitFor(() => pick().length > seen);
  return pick()[seen] as Mail;
}
const pathOf = (url: URL) => `${url.pathname}${url.search}`;

async function signIn(p: PageClient, email: string, password: string, returnTo?: string) {
  await p.get(`/account/login${returnTo ? `?returnTo=${encodeURIComponent(returnTo)}` : ''}`);
  return p.post('/account/login', { email, password, ...(returnTo ? { returnTo } : {}) });
}

describe('hosted sign-in pages: rendering', () => {
  test('each page renders HTML with the CSP and a label for every input', async () => {
    await t.call('POST', C, { token: vendor, body: { allowSignups: true } });
    const p = new PageClient(t);
    for (const url of [
      '/account/login',
      '/account/signup',
      '/account/forgot-password',
      '/account/logout',
      '/account/login/magic-link?token=abc',
      '/account/verify-email?userId=u&token=x',
      '/account/unlock?token=x',
      '/account/invitation/accept?userId=u&token=x',
    ]) {
      const r = await p.get(url);
      assert.equal(r.status, 200, `${url}: ${r.status}`);
      assert.match(String(r.headers['content-type']), /^text\/html/, url);
      assert.match(String(r.headers['content-security-policy']), /script-src 'self'/, url);
      assert.deepEqual(unlabelledInputs(r.html), [], url);
      assert.match(r.html, /name="_csrf"/, `${url} has a CSRF field`);
    }
    await t.call('POST', C, { token: vendor, body: { allowSignups: false } });
    assert.equal((await p.get('/account/signup')).status, 404, 'sign-up closed');
  });

  test('login_hint pre-fills the email; the branding names the page', async () => {
    const put = await t.call('PUT', `${C}/branding`, {
      token: vendor,
      body: { name: 'Acme <Cloud>', primaryColor: '#112233' },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const r = await new PageClient(t).get('/account/login?login_hint=ann%40x.test');
    assert.match(r.html, /id="f-email" name="email" type="email" value="ann@x.test"/);
    assert.match(r.html, /Acme &lt;Cloud&gt;/, 'the brand name, escaped');
    const css = await t.app.inject({ url: '/account/assets/brand.css' });
    assert.match(css.body, /--brand:#112233/);
    assert.equal((await t.call('GET', `${C}/branding`)).body.name, 'Acme <Cloud>');
    assert.equal((await t.call('PUT', `${C}/branding`, { body: { name: 'x' } })).status, 401);
    const bad = await t.call('PUT', `${C}/branding`, { token: vendor, body: { name: 'x', primaryColor: 'red;}' } });
    assert.equal(bad.status, 400);
    await t.call('PUT', `${C}/branding`, { token: vendor, body: { name: 'Gatehouse' } });
  });
});

describe('hosted sign-in pages: password sign-in', () => {
  test('sign-in sets gh_refresh and 303s to returnTo; a live session skips the form unless prompt=login', async () => {
    const u = await user(t, ACC);
    const p = new PageClient(t);
    const r = await signIn(p, u.email, PASSWORD, '/account/me?tab=1');
    assert.equal(r.status, 303, r.html);
    assert.equal(r.location, '/account/me?tab=1');
    const cookie = r.setCookies.gh_refresh;
    assert.ok(cookie?.value, 'gh_refresh set');
    assert.match(cookie.attrs, /HttpOnly/);
    assert.match(cookie.attrs, /SameSite=Lax/);
    const again = await p.get('/account/login?returnTo=/somewhere');
    assert.equal(again.status, 303);
    assert.equal(again.location, '/somewhere');
    assert.equal((await p.get('/account/login?prompt=login')).status, 200);
    // The API's refresh takes the same cookie: one browser session for pages and API.
    const refresh = await t.app.inject({
      method: 'POST',
      url: '/identity/resources/auth/v1/user/token/refresh',
      headers: { cookie: `gh_refresh=${cookie.value}` },
    });
    assert.equal(refresh.statusCode, 201);
  });

  test('default returnTo is /account/me; //evil.com, https://evil.com and /\\evil.com are ignored', async () => {
    const u = await user(t, ACC);
    for (const bad of ['//evil.com', 'https://evil.com', '/\\evil.com', '/\t/evil.com']) {
      const p = new PageClient(t);
      const r = await signIn(p, u.email, PASSWORD, bad);
      assert.equal(r.status, 303);
      assert.equal(r.location, '/account/me', bad);
    }
    const p = new PageClient(t);
    assert.equal((await signIn(p, u.email, PASSWORD)).location, '/account/me');
  });

  test('a wrong password and an unknown email get the same page (401, same message)', async () => {
    const u = await user(t, ACC);
    const known = await signIn(new PageClient(t), u.email, 'wrong password');
    const unknown = await signIn(new PageClient(t), 'nobody-here@sp.test', 'wrong password');
    assert.equal(known.status, 401);
    assert.equal(unknown.status, 401);
    const msg = (h: string) => /<p class="notice error" role="alert">([^<]*)<\/p>/.exec(h)?.[1];
    assert.equal(msg(known.html), 'The email or password is not right.');
    assert.equal(msg(known.html), msg(unknown.html));
    assert.equal(known.setCookies.gh_refresh, undefined);
  });

  test('a missing or wrong CSRF token, or a cross-site post, is refused with 403 and signs nobody in', async () => {
    const u = await user(t, ACC);
    const p = new PageClient(t);
    await p.get('/account/login');
    const fields = { email: u.email, password: PASSWORD };
    const none = await p.post('/account/login', fields, { csrf: null });
    assert.equal(none.status, 403);
    const wrong = await p.post('/account/login', fields, { csrf: 'forged-token' });
    assert.equal(wrong.status, 403);
    const cross = await p.post('/account/login', fields, { headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(cross.status, 403);
    for (const r of [none, wrong, cross]) {
      assert.equal(r.setCookies.gh_refresh, undefined);
      assert.match(r.html, /This form expired or was sent from another site/);
    }
    // A token from another browser (its own gh_csrf cookie) does not fit this one's cookie.
    const other = new PageClient(t);
    await other.get('/account/login');
    const stolen = await p.post('/account/login', fields, { csrf: other.csrf });
    assert.equal(stolen.status, 403);
    assert.equal((await p.post('/account/login', fields)).status, 303, 'the right token works');
  });

  test('an MFA challenge sets gh_mfa and redirects to /account/mfa with returnTo', async () => {
    await account(t, { id: 'sp-mfa' });
    const r0 = await t.call('PUT', `${C}/mfa-policy`, {
      token: vendor,
      body: { enforceMFAType: 'Force' },
      headers: { 'gatehouse-tenant-id': 'sp-mfa' },
    });
    assert.ok(r0.status < 300, JSON.stringify(r0.body));
    const u = await user(t, 'sp-mfa');
    const r = await signIn(new PageClient(t), u.email, PASSWORD, '/app');
    assert.equal(r.status, 303, r.html);
    assert.equal(r.location, '/account/mfa?returnTo=%2Fapp');
    const mfa = r.setCookies.gh_mfa;
    assert.ok(mfa?.value);
    assert.match(mfa.attrs, /Path=\/account/);
    assert.match(mfa.attrs, /HttpOnly/);
    assert.match(mfa.attrs, /SameSite=Lax/);
    assert.match(mfa.attrs, /Max-Age=600/);
    assert.equal(r.setCookies.gh_refresh, undefined, 'no session before the second factor');
  });

  test('logout (POST with CSRF) ends the session and clears the cookie', async () => {
    const u = await user(t, ACC);
    const p = new PageClient(t);
    const token = (await signIn(p, u.email, PASSWORD)).setCookies.gh_refresh?.value as string;
    const page = await p.get('/account/logout');
    assert.match(page.html, new RegExp(u.email.replace(/[.]/g, '\\.')));
    assert.equal((await p.post('/account/logout', {}, { csrf: null })).status, 403);
    const out = await p.post('/account/logout', {});
    assert.equal(out.status, 303);
    assert.equal(out.location, '/account/login');
    assert.match(out.setCookies.gh_refresh?.attrs ?? '', /Max-Age=0/);
    assert.equal((await p.get('/account/login')).status, 200, 'no session: the form again');
    const refresh = await t.call('POST', '/identity/resources/auth/v1/user/token/refresh', {
      body: { refreshToken: decodeURIComponent(token) },
    });
    assert.equal(refresh.status, 401, 'the session is ended on the server');
  });
});

describe('hosted sign-in pages: emailed links', () => {
  test('forgot password → reset link → new password → sign-in; same answer for unknown emails', async () => {
    const u = await user(t, ACC);
    const p = new PageClient(t);
    await p.get('/account/forgot-password');
    const sent = await p.post('/account/forgot-password', { email: u.email });
    assert.equal(sent.status, 200);
    const unknown = await p.post('/account/forgot-password', { email: 'nobody@sp.test' });
    const info = (h: string) => /<p class="notice info" role="status">([^<]*)<\/p>/.exec(h)?.[1];
    assert.ok(info(sent.html));
    assert.equal(info(sent.html), info(unknown.html));
    const link = linkIn(await mailTo(u.email, /Reset your password/));
    assert.equal(link.pathname, '/account/reset-password');
    const form = await p.get(pathOf(link));
    assert.equal(form.status, 200);
    assert.deepEqual(unlabelledInputs(form.html), []);
    const weak = await p.post('/account/reset-password', {
      ...hiddenFields(form.html, '/account/reset-password'),
      password: 'abc',
    });
    assert.equal(weak.status, 400);
    assert.match(weak.html, /password policy/);
    const done = await p.post('/account/reset-password', {
      ...hiddenFields(form.html, '/account/reset-password'),
      password: 'Brand-New-Secret-77',
    });
    assert.equal(done.status, 200, done.html);
    assert.equal((await signIn(new PageClient(t), u.email, PASSWORD)).status, 401);
    assert.equal((await signIn(new PageClient(t), u.email, 'Brand-New-Secret-77')).status, 303);
    assert.equal((await p.get(pathOf(link))).status, 410, 'the link works once');
  });

  test('sign-up → activation link (sets the password when needed) → signed in at returnTo', async () => {
    await t.call('POST', C, { token: vendor, body: { allowSignups: true } });
    try {
      const p = new PageClient(t);
      await p.get('/account/signup');
      const email = 'new-signup@sp.test';
      const r = await p.post('/account/signup', {
        name: 'Nia',
        email,
        password: 'Signup-Secret-2024',
        companyName: '',
      });
      assert.equal(r.status, 200, r.html);
      assert.match(r.html, /Check your email/);
      assert.equal((await signIn(new PageClient(t), email, 'Signup-Secret-2024')).status, 403, 'not active yet');
      const link = linkIn(await mailTo(email, /Activate your account/));
      assert.equal(link.pathname, '/account/activate');
      const page = await p.get(pathOf(link));
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.html, /name="password"/, 'the user has a password already');
      const ok = await p.post('/account/activate', hiddenFields(page.html, '/account/activate'));
      assert.equal(ok.status, 303, ok.html);
      assert.equal(ok.location, '/account/me');
      assert.ok(ok.setCookies.gh_refresh?.value);
      assert.equal((await signIn(new PageClient(t), email, 'Signup-Secret-2024')).status, 303);
    } finally {
      await t.call('POST', C, { token: vendor, body: { allowSignups: false } });
    }
  });

  test('verify-email: the link shows a button; the post verifies once', async () => {
    const u = await user(t, ACC);
    await t.call('POST', `/identity/resources/users/v1/${u.id}/verification-email`, { token: vendor });
    const link = linkIn(await mailTo(u.email, /Verify your email/));
    assert.equal(link.pathname, '/account/verify-email');
    const p = new PageClient(t);
    const page = await p.get(pathOf(link));
    const ok = await p.post('/account/verify-email', hiddenFields(page.html, '/account/verify-email'));
    assert.equal(ok.status, 200);
    assert.match(ok.html, /Your email is verified/);
    const again = await p.post('/account/verify-email', hiddenFields(page.html, '/account/verify-email'));
    assert.equal(again.status, 410);
  });

  test('unlock: the lockout mail links to /account/unlock, which unlocks the user', async () => {
    const u = await user(t, ACC);
    for (let i = 0; i < 5; i++) await signIn(new PageClient(t), u.email, 'wrong password');
    const locked = await signIn(new PageClient(t), u.email, PASSWORD);
    assert.equal(locked.status, 403);
    assert.match(locked.html, /This account is locked/);
    const link = linkIn(await mailTo(u.email, /locked/));
    assert.equal(link.pathname, '/account/unlock');
    const p = new PageClient(t);
    const page = await p.get(pathOf(link));
    const ok = await p.post('/account/unlock', hiddenFields(page.html, '/account/unlock'));
    assert.equal(ok.status, 200, ok.html);
    assert.equal((await signIn(new PageClient(t), u.email, PASSWORD)).status, 303);
  });

  test('invitation: the emailed link accepts and signs the invitee in', async () => {
    const email = 'invitee@sp.test';
    const inv = await t.call('POST', '/identity/resources/users/v2', {
      token: vendor,
      body: { email, name: 'Ivy' },
      headers: { 'gatehouse-tenant-id': ACC },
    });
    assert.equal(inv.status, 201, JSON.stringify(inv.body));
    const link = linkIn(await mailTo(email, /invited/));
    assert.equal(link.pathname, '/account/invitation/accept');
    const p = new PageClient(t);
    const page = await p.get(`${pathOf(link)}&returnTo=/welcome`);
    const ok = await p.post('/account/invitation/accept', hiddenFields(page.html, '/account/invitation/accept'));
    assert.equal(ok.status, 303, ok.html);
    assert.equal(ok.location, '/welcome');
    assert.ok(ok.setCookies.gh_refresh?.value);
  });

  test('magic link and email code sign in when enabled', async () => {
    const S = `${C}/auth/strategies`;
    const on = await t.call('POST', S, {
      token: vendor,
      body: { MagicLink: { active: true }, Code: { active: true } },
    });
    assert.ok(on.status < 300, JSON.stringify(on.body));
    try {
      const u = await user(t, ACC);
      const p = new PageClient(t);
      const login = await p.get('/account/login');
      assert.match(login.html, /action="\/account\/login\/magic-link"/);
      assert.match(login.html, /action="\/account\/login\/code"/);
      assert.deepEqual(unlabelledInputs(login.html), []);
      const sent = await p.post('/account/login/magic-link', { email: u.email, returnTo: '/ml' });
      assert.equal(sent.status, 200);
      const unknown = await p.post('/account/login/magic-link', { email: 'nobody@sp.test' });
      assert.equal(unknown.status, 200, 'the same answer for an unknown email');
      const link = linkIn(await mailTo(u.email, /sign-in link/));
      assert.equal(link.pathname, '/account/login/magic-link');
      const page = await p.get(`${pathOf(link)}&returnTo=/ml`);
      const ok = await p.post(
        '/account/login/magic-link/confirm',
        hiddenFields(page.html, '/account/login/magic-link/confirm'),
      );
      assert.equal(ok.status, 303, ok.html);
      assert.equal(ok.location, '/ml');

      const q = new PageClient(t);
      await q.get('/account/login');
      const codePage = await q.post('/account/login/code', { email: u.email });
      assert.equal(codePage.status, 200);
      assert.deepEqual(unlabelledInputs(codePage.html), []);
      const code = codeIn(await mailTo(u.email, /sign-in code/));
      const wrong = await q.post('/account/login/code/verify', {
        email: u.email,
        code: '000000' === code ? '111111' : '000000',
      });
      assert.equal(wrong.status, 400);
      const good = await q.post('/account/login/code/verify', { email: u.email, code });
      assert.equal(good.status, 303, good.html);
      assert.ok(good.setCookies.gh_refresh?.value);
    } finally {
      await t.call('POST', S, { token: vendor, body: { MagicLink: { active: false }, Code: { active: false } } });
    }
  });
});

describe('hosted sign-in pages: other methods and policies', () => {
  test('SMS code: the code texted to the number signs in; a wrong code re-renders the code form', async () => {
    const sms = await startSmsServer();
    const S = `${C}/auth/strategies`;
    try {
      await sms.configure(t);
      assert.ok((await t.call('POST', S, { token: vendor, body: { SmsCode: { active: true } } })).status < 300);
      const phone = '+15550004444';
      await user(t, ACC, { fields: { phoneNumber: phone } });
      const p = new PageClient(t);
      await p.get('/account/login');
      const form = await p.post('/account/login/sms', { phoneNumber: phone, returnTo: '/sms' });
      assert.equal(form.status, 200, form.html);
      const code = smsCode(await sms.waitFor((m) => m.to === phone));
      const wrong = await p.post('/account/login/sms/verify', {
        phoneNumber: phone,
        code: code === '000000' ? '1' : '0',
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.html, /action="\/account\/login\/sms\/verify"/);
      const ok = await p.post('/account/login/sms/verify', { phoneNumber: phone, code, returnTo: '/sms' });
      assert.equal(ok.status, 303, ok.html);
      assert.equal(ok.location, '/sms');
    } finally {
      await t.call('POST', S, { token: vendor, body: { SmsCode: { active: false } } });
      await sms.close();
    }
  });

  test('a social provider button starts its authorize redirect (state, PKCE, the allowed redirect URI)', async () => {
    const cb = 'https://app.sp.test/callback';
    await t.call('POST', C, { token: vendor, body: { allowedRedirectUrls: [cb] } });
    const r = await t.call('POST', '/identity/resources/sso/v2', {
      token: vendor,
      body: {
        type: 'github',
        clientId: 'client-gh',
        secret: 'secret-gh',
        redirectUrl: cb,
        active: true,
        authorizationUrl: 'https://github.example/authorize',
        tokenUrl: 'https://github.example/token',
        userInfoUrl: 'https://github.example/user',
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const p = new PageClient(t);
    const page = await p.get('/account/login');
    assert.match(page.html, /action="\/account\/login\/social\/github"/);
    assert.match(page.html, /Sign in with Github/);
    const go = await p.post('/account/login/social/github', {});
    assert.equal(go.status, 303, go.html);
    const to = new URL(go.location as string);
    assert.equal(to.origin + to.pathname, 'https://github.example/authorize');
    assert.equal(to.searchParams.get('redirect_uri'), cb);
    assert.ok(to.searchParams.get('state'));
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    const unknown = await p.post('/account/login/social/myspace', {});
    assert.ok(unknown.status >= 400 && unknown.status < 500, String(unknown.status));
    assert.match(unknown.html, /This provider is not available right now/);
    const removed = await t.call('DELETE', '/identity/resources/sso/v2/github', { token: vendor });
    assert.ok(removed.status < 300, String(removed.status));
    assert.doesNotMatch((await p.get('/account/login?prompt=login')).html, /social\/github/, 'no button once removed');
  });

  test('SSO by email domain: an email without SSO re-renders with a notice, nothing signed in', async () => {
    const p = new PageClient(t);
    await p.get('/account/login');
    const r = await p.post('/account/login/sso', { email: 'someone@no-sso.test' });
    assert.equal(r.status, 404);
    assert.match(r.html, /Single sign-on is not set up for this email/);
    assert.equal(r.setCookies.gh_refresh, undefined);
  });

  test('with the captcha policy on, a form post without a captcha token is refused and signs nobody in', async () => {
    const P = `${C}/captcha-policy`;
    const on = await t.call('PUT', P, {
      token: vendor,
      body: { enabled: true, siteKey: 'site-key', secretKey: 'secret-key', minScore: 0.5 },
    });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    try {
      const u = await user(t, ACC);
      const page = await new PageClient(t).get('/account/login');
      assert.match(page.html, /requires a captcha/, 'the page says so before anyone tries');
      const r = await signIn(new PageClient(t), u.email, PASSWORD);
      assert.equal(r.status, 400);
      assert.match(r.html, /requires a captcha/);
      assert.equal(r.setCookies.gh_refresh, undefined);
    } finally {
      await t.call('PUT', P, {
        token: vendor,
        body: { enabled: false, siteKey: 'site-key', secretKey: 'secret-key', minScore: 0.5 },
      });
    }
  });
});
