import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, linkIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let sms: SmsServer;
const P = '/identity/resources/auth/v1/passwordless';
const STRATEGIES = '/identity/resources/configurations/v1/auth/strategies';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

const prelogin = (type: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.call('POST', `${P}/${type}/prelogin`, { body, headers });
const postlogin = (type: string, body: Record<string, unknown>) => t.call('POST', `${P}/${type}/postlogin`, { body });

/** Asks for an email code and reads it from the message the local SMTP server received. */
async function emailCode(email: string, ip?: string): Promise<string> {
  const before = mailbox.to(email).length;
  const r = await prelogin('code', { email }, ip ? { 'x-forwarded-for': ip } : {});
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const mail = await mailbox.waitFor((m) => m.to.includes(email) && mailbox.to(email).indexOf(m) >= before);
  return codeIn(mail);
}

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  sms = await startSmsServer();
  await sms.configure(t);
  await account(t, { id: 'pl-acc', name: 'Passwordless Inc' });
});
after(async () => {
  await t?.close();
  await mailbox?.close();
  await sms?.close();
});

describe('configuration', () => {
  test('email methods are off by default: pre-login answers 400 naming the switch; the vendor turns them on', async () => {
    const pub = await t.call('GET', `${STRATEGIES}/public`);
    assert.equal(pub.status, 200);
    assert.deepEqual(
      {
        m: pub.body.MagicLink.active,
        c: pub.body.Code.active,
        s: pub.body.SmsCode.active,
        p: pub.body.EmailAndPassword.active,
      },
      { m: false, c: false, s: true, p: true },
    );
    const off = await prelogin('magiclink', { email: 'nobody@pl.test' });
    assert.equal(off.status, 400);
    assert.equal(off.body.errorCode, 'GH-62005');
    assert.equal((await t.call('POST', STRATEGIES, { body: { MagicLink: { active: true } } })).status, 401);
    const bad = await t.call('POST', STRATEGIES, { token: vendor, body: { Code: { expiresInMinutes: 0 } } });
    assert.equal(bad.status, 400);
    const on = await t.call('POST', STRATEGIES, {
      token: vendor,
      body: { MagicLink: { active: true }, Code: { active: true, expiresInMinutes: 5 } },
    });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    assert.equal(on.body.MagicLink.active, true);
    assert.equal(on.body.MagicLink.expiresInMinutes, 15);
    assert.deepEqual(on.body.Code, { active: true, expiresInMinutes: 5 });
    assert.deepEqual((await t.call('GET', STRATEGIES, { token: vendor })).body, on.body);
  });
});

describe('magic link', () => {
  test('pre-login emails a link; post-login with its token signs in once', async () => {
    const { id } = await user(t, 'pl-acc', { email: 'magic@pl.test' });
    const r = await prelogin('magiclink', { email: 'Magic@PL.test' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {});
    const mail = await mailbox.waitFor((m) => m.to.includes('magic@pl.test'));
    const token = linkIn(mail).searchParams.get('token');
    assert.ok(token && token.length >= 40);
    const s = await postlogin('magiclink', { token });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    assert.equal(s.body.userId, id);
    assert.match(String(s.headers['set-cookie']), /^gh_refresh=/);
    const c = claims(s.body.accessToken);
    assert.equal(c.sub, id);
    assert.equal(c.tenantId, 'pl-acc');
    const again = await postlogin('magiclink', { token });
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-62002');
    const wrong = await postlogin('magiclink', { token: `${token}x` });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-62001');
  });

  test('an expired link is refused with 410; a newer link replaces the older one', async () => {
    await user(t, 'pl-acc', { email: 'expiry@pl.test' });
    await prelogin('magiclink', { email: 'expiry@pl.test' });
    const first = linkIn(await mailbox.waitFor((m) => m.to.includes('expiry@pl.test'))).searchParams.get('token')!;
    await prelogin('magiclink', { email: 'expiry@pl.test' });
    const second = linkIn(
      await mailbox.waitFor((m) => m.to.includes('expiry@pl.test') && !m.text.includes(first)),
    ).searchParams.get('token')!;
    assert.notEqual(first, second);
    assert.equal((await postlogin('magiclink', { token: first })).status, 410);
    // Time passing is simulated on the row (no waiting in tests).
    await t.db.query("UPDATE one_time_codes SET expires_at = now() - interval '1 second' WHERE purpose = 'magiclink'");
    const r = await postlogin('magiclink', { token: second });
    assert.equal(r.status, 410);
    assert.match(r.body.errors[0], /expired/);
  });
});

describe('email code', () => {
  test('the code from the email signs in with the email; reuse is 410; a wrong code is 400 and the right one still works', async () => {
    const { id } = await user(t, 'pl-acc', { email: 'otc@pl.test' });
    const code = await emailCode('otc@pl.test');
    assert.match(code, /^\d{6}$/);
    const wrong = await postlogin('code', { token: code === '000000' ? '111111' : '000000', email: 'otc@pl.test' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-62001');
    const ok = await postlogin('code', { token: code, email: 'otc@pl.test' });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(claims(ok.body.accessToken).sub, id);
    // The wrong code counted, the good sign-in reset the count.
    const me = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.equal(me.body.isLocked, false);
    const reuse = await postlogin('code', { token: code, email: 'otc@pl.test' });
    assert.equal(reuse.status, 410);
  });

  test('a code needs the identifier: the same code for an unknown email is 400', async () => {
    await user(t, 'pl-acc', { email: 'otc2@pl.test' });
    const code = await emailCode('otc2@pl.test');
    const r = await postlogin('code', { token: code, email: 'stranger@pl.test' });
    assert.equal(r.status, 400);
    assert.equal(r.body.errorCode, 'GH-62001');
    assert.equal((await postlogin('code', { token: code })).status, 400);
  });

  test('wrong codes count toward lockout: after five the user is locked, even the right code and the password are refused', async () => {
    const { id } = await user(t, 'pl-acc', { email: 'lock@pl.test' });
    const code = await emailCode('lock@pl.test');
    const wrong = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) {
      const r = await postlogin('code', { token: wrong, email: 'lock@pl.test' });
      assert.equal(r.status, 400, `attempt ${i + 1}`);
    }
    const right = await postlogin('code', { token: code, email: 'lock@pl.test' });
    assert.equal(right.status, 403);
    assert.equal(right.body.errorCode, 'GH-43005');
    const pwd = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { email: 'lock@pl.test', password: PASSWORD },
    });
    assert.equal(pwd.status, 403);
    const u = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.equal(u.body.isLocked, true);
    // A locked user's pre-login answers the same and sends nothing new.
    const n = mailbox.to('lock@pl.test').length;
    const again = await prelogin('code', { email: 'lock@pl.test' });
    assert.equal(again.status, 201);
    await prelogin('code', { email: 'otc-marker@pl.test' });
    assert.equal(mailbox.to('lock@pl.test').length, n);
  });

  test('a code is burned after five wrong attempts (lockout off): the right code then answers 410', async () => {
    await user(t, 'pl-acc', { email: 'burn@pl.test' });
    const off = await t.call('PATCH', '/identity/resources/configurations/v1/lockout-policy', {
      token: vendor,
      body: { enabled: false },
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    try {
      const code = await emailCode('burn@pl.test');
      const wrong = code === '123456' ? '654321' : '123456';
      for (let i = 0; i < 5; i++)
        assert.equal((await postlogin('code', { token: wrong, email: 'burn@pl.test' })).status, 400);
      const r = await postlogin('code', { token: code, email: 'burn@pl.test' });
      assert.equal(r.status, 410);
    } finally {
      await t.call('PATCH', '/identity/resources/configurations/v1/lockout-policy', {
        token: vendor,
        body: { enabled: true },
      });
    }
  });
});

describe('no enumeration and rate limits', () => {
  test('pre-login answers unknown and known identifiers the same, and sends nothing for the unknown one', async () => {
    await user(t, 'pl-acc', { email: 'known@pl.test' });
    for (const type of ['magiclink', 'code']) {
      const known = await prelogin(type, { email: 'known@pl.test' });
      const unknown = await prelogin(type, { email: 'unknown@pl.test' });
      assert.equal(known.status, unknown.status);
      assert.deepEqual(known.body, unknown.body);
      assert.equal(known.headers['content-type'], unknown.headers['content-type']);
    }
    const known = await prelogin('smscode', { phoneNumber: '+15550001111' });
    const unknown = await prelogin('smscode', { phoneNumber: '+15550002222' });
    assert.equal(known.status, unknown.status);
    assert.deepEqual(Object.keys(known.body), Object.keys(unknown.body));
    await mailbox.waitFor((m) => m.to.includes('known@pl.test'));
    assert.equal(mailbox.to('unknown@pl.test').length, 0);
  });

  test('too many code requests for one identifier answer 429 with retry-after', async () => {
    let last;
    for (let i = 0; i < 6; i++) last = await prelogin('code', { email: 'flood@pl.test' });
    assert.equal(last!.status, 429);
    assert.equal(last!.body.errorCode, 'GH-10006');
    assert.ok(Number(last!.headers['retry-after']) > 0);
  });

  test('bad input is a 400 naming the field', async () => {
    const r = await prelogin('code', {});
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /email/);
    const phone = await prelogin('smscode', { phoneNumber: 'not a phone' });
    assert.equal(phone.status, 400);
    assert.equal((await t.call('POST', `${P}/carrier-pigeon/prelogin`, { body: { email: 'a@b.c' } })).status, 400);
    assert.equal((await postlogin('magiclink', {})).status, 400);
  });
});

describe('SMS code', () => {
  test('a migrated user with phoneNumberType auth signs in with the code from the SMS', async () => {
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: {
        tenantId: 'pl-acc',
        email: 'phone@pl.test',
        name: 'Phone User',
        phoneNumber: '+15550001111',
        phoneNumberType: 'auth',
      },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const pre = await prelogin('smscode', { phoneNumber: '+15550001111' });
    assert.equal(pre.status, 201);
    assert.match(pre.body.phoneNumber, /^\+1\*+11$/);
    const msg = await sms.waitFor((s) => s.to === '+15550001111');
    const code = smsCode(msg);
    const wrong = await postlogin('smscode', {
      token: code === '000000' ? '111111' : '000000',
      phoneNumber: '+15550001111',
    });
    assert.equal(wrong.status, 400);
    const ok = await postlogin('smscode', { token: code, phoneNumber: '+15550001111' });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(claims(ok.body.accessToken).sub, m.body.id);
    assert.equal((await postlogin('smscode', { token: code, phoneNumber: '+15550001111' })).status, 410);
  });

  test('a number registered for MFA only does not sign in by SMS', async () => {
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: { tenantId: 'pl-acc', email: 'mfaphone@pl.test', phoneNumber: '+15550003333', phoneNumberType: 'mfa' },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const pre = await prelogin('smscode', { phoneNumber: '+15550003333' });
    assert.equal(pre.status, 201);
    const r = await postlogin('smscode', { token: '123456', phoneNumber: '+15550003333' });
    assert.equal(r.status, 400);
  });
});
