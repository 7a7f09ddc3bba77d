import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { account, user } from '../fixtures/builders.ts';

const U = '/identity/resources/users';
const LOGIN = '/identity/resources/auth/v1/user';
const PASSWORD = 'Initial-Passw0rd-2024!';
const TENANT = 'pr-acme';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let sms: SmsServer;

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IDENTIFIER: '3' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  sms = await startSmsServer();
  await mailbox.configure(t);
  await sms.configure(t);
  await account(t, { id: TENANT, name: 'Acme' });
});
after(async () => {
  await t?.close();
  await mailbox?.close();
  await sms?.close();
});

const createUser = async (email: string, fields: Record<string, unknown> = {}) =>
  (await user(t, TENANT, { email, name: 'Test User', password: PASSWORD, fields })).id;
const login = (email: string, password: string) => t.call('POST', LOGIN, { body: { email, password } });
const requestReset = (email: string) => t.call('POST', `${U}/v1/passwords/reset`, { body: { email } });
const verifyReset = (body: Record<string, unknown>) => t.call('POST', `${U}/v1/passwords/reset/verify`, { body });
/** The reset link of the newest ResetPassword mail to `email` (after `seen` earlier ones). */
async function resetLink(email: string, seen = 0): Promise<{ userId: string; token: string }> {
  await mailbox.waitFor(() => mailbox.to(email).filter((m) => m.subject === 'Reset your password').length > seen);
  const m = mailbox.to(email).filter((x) => x.subject === 'Reset your password')[seen];
  const url = linkIn(m);
  assert.equal(url.pathname, '/account/reset-password');
  return { userId: url.searchParams.get('userId')!, token: url.searchParams.get('token')! };
}

describe('password reset by emailed link', () => {
  test('the full flow: request, link from the real mail, weak password refused, reset, sessions ended, single use', async () => {
    const id = await createUser('ada@pr.test');
    const signedIn = await login('ada@pr.test', PASSWORD);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));

    const r = await requestReset('Ada@PR.test');
    assert.equal(r.status, 201);
    const link = await resetLink('ada@pr.test');
    assert.equal(link.userId, id);
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: link })).status, 200);

    const weak = await verifyReset({ ...link, password: 'abc' });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.errorCode, 'GH-41001');
    assert.equal(
      (await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: link })).status,
      200,
      'a refused password leaves the token usable',
    );

    const ok = await verifyReset({ ...link, password: 'Brand-New-Secret-77' });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal((await login('ada@pr.test', PASSWORD)).status, 401);
    assert.equal((await login('ada@pr.test', 'Brand-New-Secret-77')).status, 200);
    const refresh = await t.call('POST', `${LOGIN}/token/refresh`, {
      body: { refreshToken: signedIn.body.refreshToken },
    });
    assert.equal(refresh.status, 401, 'the sessions from before the reset are ended');

    const again = await verifyReset({ ...link, password: 'Another-Secret-88' });
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-61011');
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: link })).status, 410);

    const events = await t.db.query<{ data: any }>(
      `SELECT data FROM events WHERE event_key = 'user.password_reset' AND entity_id = $1`,
      [id],
    );
    assert.equal(events.rows.length, 1);
    assert.equal(events.rows[0].data.method, 'email');
    assert.ok(!JSON.stringify(events.rows[0].data).includes(link.token));
  });

  test('a wrong token, or a token of another user, is 400; nothing changes', async () => {
    const id = await createUser('bob@pr.test');
    const other = await createUser('cy@pr.test');
    await requestReset('bob@pr.test');
    const link = await resetLink('bob@pr.test');
    const wrong = await verifyReset({ userId: id, token: 'x'.repeat(43), password: 'Brand-New-Secret-77' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-61010');
    assert.equal(
      (await verifyReset({ userId: other, token: link.token, password: 'Brand-New-Secret-77' })).status,
      400,
    );
    assert.equal(
      (await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: { userId: id, token: 'nope' } })).status,
      400,
    );
    assert.equal((await verifyReset({ userId: id, token: link.token })).status, 400, 'password is required');
    assert.equal((await login('bob@pr.test', PASSWORD)).status, 200);
  });

  test('an expired link is 410; a newer link replaces the older one', async () => {
    await createUser('dee@pr.test');
    await requestReset('dee@pr.test');
    const first = await resetLink('dee@pr.test');
    await requestReset('dee@pr.test');
    const second = await resetLink('dee@pr.test', 1);
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: first })).status, 410, 'superseded');
    await t.db.query(
      `UPDATE password_reset_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND used_at IS NULL`,
      [second.userId],
    );
    const r = await verifyReset({ ...second, password: 'Brand-New-Secret-77' });
    assert.equal(r.status, 410);
    assert.match(r.body.errors[0], /expired/);
  });

  test("the account's password policy and the password history apply", async () => {
    await createUser('eve@pr.test');
    const pol = await t.call('POST', '/identity/resources/configurations/v1/password', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { minLength: 24, minPhraseLength: 30 },
    });
    assert.equal(pol.status, 201, JSON.stringify(pol.body));
    const hist = await t.call('POST', '/identity/resources/configurations/v1/password-history-policy', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { enabled: true, historySize: 3 },
    });
    assert.equal(hist.status, 201, JSON.stringify(hist.body));
    try {
      await requestReset('eve@pr.test');
      const link = await resetLink('eve@pr.test');
      const short = await verifyReset({ ...link, password: 'Brand-New-Secret-77' });
      assert.equal(short.status, 400);
      assert.ok(short.body.context.rules.includes('minLength'));
      const reused = await verifyReset({ ...link, password: 'Reused-but-long-enough-passw0rd' });
      assert.equal(reused.status, 201, JSON.stringify(reused.body));
      await requestReset('eve@pr.test');
      const link2 = await resetLink('eve@pr.test', 1);
      const same = await verifyReset({ ...link2, password: 'Reused-but-long-enough-passw0rd' });
      assert.equal(same.status, 400);
      assert.ok(same.body.context.rules.includes('history'));
    } finally {
      await t.call('POST', '/identity/resources/configurations/v1/password', {
        token: vendor,
        headers: { 'gatehouse-tenant-id': TENANT },
        body: { minLength: 6 },
      });
    }
  });

  test('unknown and known emails get the same answer; only the known one gets mail', async () => {
    await createUser('fay@pr.test');
    const known = await requestReset('fay@pr.test');
    const unknown = await requestReset('nobody@pr.test');
    assert.equal(known.status, unknown.status);
    assert.deepEqual(known.body, unknown.body);
    const k2 = await t.call('POST', `${U}/v2/passwords/reset/email`, {
      body: { identifier: 'fay@pr.test', identifierType: 'email' },
    });
    const u2 = await t.call('POST', `${U}/v2/passwords/reset/email`, {
      body: { identifier: 'nobody2@pr.test', identifierType: 'email' },
    });
    assert.equal(k2.status, 200);
    assert.equal(u2.status, 200);
    assert.deepEqual(Object.keys(k2.body), Object.keys(u2.body));
    await resetLink('fay@pr.test', 1);
    assert.equal(mailbox.to('nobody@pr.test').length, 0);
  });

  test('too many requests for one identifier are 429 with retry-after', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await requestReset('flood@pr.test'));
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 429],
    );
    assert.ok(Number(answers[3].headers['retry-after']) > 0);
    assert.equal(answers[3].body.errorCode, 'GH-10006');
  });

  test('the vendor can generate a reset link; it works once', async () => {
    const id = await createUser('gus@pr.test');
    const g = await t.call('POST', `${U}/v1/${id}/links/generate-password-reset-token`, { token: vendor });
    assert.equal(g.status, 201);
    const url = new URL(g.body.link);
    assert.equal(url.searchParams.get('token'), g.body.token);
    assert.equal((await verifyReset({ userId: id, token: g.body.token, password: 'Brand-New-Secret-77' })).status, 201);
    assert.equal((await verifyReset({ userId: id, token: g.body.token, password: 'Brand-New-Secret-78' })).status, 410);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/00000000-0000-4000-8000-000000000000/links/generate-password-reset-token`, {
          token: vendor,
        })
      ).status,
      404,
    );
  });
});

describe('password reset by SMS code', () => {
  test('code from the real SMS → token → new password; the code is single use', async () => {
    const id = await createUser('hal@pr.test', { phoneNumber: '+14155550181' });
    const r = await t.call('POST', `${U}/v2/passwords/reset/sms`, {
      body: { identifier: '+14155550181', identifierType: 'phoneNumber' },
    });
    assert.equal(r.status, 200);
    const m = await sms.waitFor((x) => x.to === '+14155550181');
    const code = smsCode(m);
    const wrong = await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
      body: { sessionId: r.body.sessionId, otcToken: code === '000000' ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 400);
    const v = await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
      body: { sessionId: r.body.sessionId, otcToken: code },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.userId, id);
    assert.equal(
      (
        await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
          body: { sessionId: r.body.sessionId, otcToken: code },
        })
      ).status,
      410,
    );
    assert.equal((await verifyReset({ userId: id, token: v.body.token, password: 'Sms-Reset-Secret-99' })).status, 201);
    assert.equal((await login('hal@pr.test', 'Sms-Reset-Secret-99')).status, 200);
  });

  test('five wrong codes burn the session (429); then even the right code is refused', async () => {
    await createUser('ivy@pr.test', { phoneNumber: '+14155550182' });
    const r = await t.call('POST', `${U}/v2/passwords/reset/sms`, { body: { identifier: 'ivy@pr.test' } });
    const code = smsCode(await sms.waitFor((x) => x.to === '+14155550182'));
    const bad = code === '999999' ? '888888' : '999999';
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (
          await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
            body: { sessionId: r.body.sessionId, otcToken: bad },
          })
        ).status,
      );
    assert.deepEqual(statuses, [400, 400, 400, 400, 429]);
    assert.equal(
      (
        await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
          body: { sessionId: r.body.sessionId, otcToken: code },
        })
      ).status,
      410,
    );
  });

  test('an expired code is 410; an unknown session is 400 like a wrong code; unknown users get a session id too', async () => {
    await createUser('jay@pr.test', { phoneNumber: '+14155550183' });
    const r = await t.call('POST', `${U}/v2/passwords/reset/sms`, {
      body: { identifier: '+14155550183', identifierType: 'phoneNumber' },
    });
    const code = smsCode(await sms.waitFor((x) => x.to === '+14155550183'));
    await t.db.query(`UPDATE recovery_codes SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      r.body.sessionId,
    ]);
    assert.equal(
      (
        await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
          body: { sessionId: r.body.sessionId, otcToken: code },
        })
      ).status,
      410,
    );
    const unknown = await t.call('POST', `${U}/v2/passwords/reset/sms`, {
      body: { identifier: '+14155550999', identifierType: 'phoneNumber' },
    });
    assert.equal(unknown.status, 200);
    assert.match(unknown.body.sessionId, /^[0-9a-f-]{36}$/);
    const u = await t.call('POST', `${U}/v2/passwords/reset/sms/verify`, {
      body: { sessionId: unknown.body.sessionId, otcToken: '123456' },
    });
    assert.equal(u.status, 400);
    assert.equal(sms.to('+14155550999').length, 0);
  });
});

describe('migrated users without a usable hash', () => {
  test('the sign-in reset token alone cannot set a password: it triggers the emailed link, which does', async () => {
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: { email: 'kim@pr.test', tenantId: TENANT },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const s = await login('kim@pr.test', 'anything-at-all');
    assert.equal(s.status, 200);
    const token = s.body.resetPasswordToken;
    assert.ok(token);
    const r = await verifyReset({ userId: s.body.userId, token, password: 'Attacker-Chosen-Pass-1' });
    assert.equal(r.status, 400);
    assert.equal(r.body.errorCode, 'GH-61017');
    assert.equal(
      (await verifyReset({ userId: s.body.userId, token, password: 'Attacker-Chosen-Pass-1' })).status,
      410,
      'the sign-in token is used up',
    );
    assert.equal(
      (await login('kim@pr.test', 'Attacker-Chosen-Pass-1')).body.resetPasswordToken !== undefined,
      true,
      'no password was set',
    );
    const link = await resetLink('kim@pr.test');
    assert.equal((await verifyReset({ ...link, password: 'Owner-Chosen-Pass-22' })).status, 201);
    const after = await login('kim@pr.test', 'Owner-Chosen-Pass-22');
    assert.equal(after.status, 200);
    assert.ok(after.body.accessToken);
  });
});
