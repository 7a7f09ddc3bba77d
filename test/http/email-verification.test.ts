import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, linkIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

const U = '/identity/resources/users';
const LOGIN = '/identity/resources/auth/v1/user';
const PASSWORD = 'Verify-Passw0rd-2024!';
const TENANT = 'ev-acme';
const SUBJECT = 'Verify your email address';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IDENTIFIER: '3' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  await account(t, { id: TENANT, name: 'Acme' });
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

async function createUser(email: string): Promise<string> {
  const u = await user(t, TENANT, { email, name: 'V User', password: PASSWORD });
  assert.equal(u.body.verified, false);
  return u.id;
}
const verified = async (id: string) =>
  (await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor })).body.verified as boolean;
const userToken = async (email: string) => (await signedIn(t, { email, password: PASSWORD })).accessToken;
const mails = (email: string) => mailbox.to(email).filter((m) => m.subject === SUBJECT);

describe('email verification', () => {
  test('the vendor sends the EmailVerification mail; its link marks the user verified, once', async () => {
    const id = await createUser('ann@ev.test');
    const s = await t.call('POST', `${U}/v1/${id}/verification-email`, { token: vendor });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    await mailbox.waitFor(() => mails('ann@ev.test').length > 0);
    const url = linkIn(mails('ann@ev.test')[0]);
    assert.equal(url.pathname, '/account/verify-email');
    const body = { userId: url.searchParams.get('userId'), token: url.searchParams.get('token') };
    assert.equal(body.userId, id);
    assert.equal(
      (await t.call('POST', `${U}/v1/email/verify`, { body: { userId: id, token: 'wrong-token' } })).status,
      400,
    );
    const ok = await t.call('POST', `${U}/v1/email/verify`, { body });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await verified(id), true);
    const again = await t.call('POST', `${U}/v1/email/verify`, { body });
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-61016');
    assert.equal(
      (await t.call('POST', `${U}/v1/${id}/verification-email`, { token: vendor })).status,
      409,
      'already verified',
    );
    const tok = (await t.call('POST', LOGIN, { body: { email: 'ann@ev.test', password: PASSWORD } })).body;
    assert.equal(tok.emailVerified ?? true, true);
  });

  test('an expired link is 410 and leaves the user unverified', async () => {
    const id = await createUser('bea@ev.test');
    await t.call('POST', `${U}/v1/${id}/verification-email`, { token: vendor });
    await mailbox.waitFor(() => mails('bea@ev.test').length > 0);
    const url = linkIn(mails('bea@ev.test')[0]);
    await t.db.query(
      `UPDATE email_verification_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1`,
      [id],
    );
    const r = await t.call('POST', `${U}/v1/email/verify`, {
      body: { userId: id, token: url.searchParams.get('token') },
    });
    assert.equal(r.status, 410);
    assert.equal(await verified(id), false);
  });

  test('a signed-in user verifies their own address with the emailed code; wrong codes are 400', async () => {
    const id = await createUser('cat@ev.test');
    const token = await userToken('cat@ev.test');
    const r = await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'cat@ev.test' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await mailbox.waitFor(() => mails('cat@ev.test').length > 0);
    const code = codeIn(mails('cat@ev.test')[0]);
    const wrong = await t.call('POST', `${U}/v1/email/me/verify`, {
      token,
      body: { email: 'cat@ev.test', code: code === '000000' ? '000001' : '000000' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(await verified(id), false);
    const ok = await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'cat@ev.test', code } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await verified(id), true);
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'cat@ev.test', code } })).status,
      410,
    );
  });

  test('an email change takes effect only with the code sent to the new address', async () => {
    const id = await createUser('dan@ev.test');
    await createUser('taken@ev.test');
    const token = await userToken('dan@ev.test');
    assert.equal((await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'taken@ev.test' } })).status, 409);
    assert.equal((await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'not-an-email' } })).status, 400);
    assert.equal((await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'Dan.New@ev.test' } })).status, 200);
    await mailbox.waitFor(() => mails('dan.new@ev.test').length > 0);
    const code = codeIn(mails('dan.new@ev.test')[0]);
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'other@ev.test', code } })).status,
      400,
      'the code belongs to the new address',
    );
    const ok = await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'dan.new@ev.test', code } });
    assert.equal(ok.status, 200);
    const user = (await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor })).body;
    assert.equal(user.email, 'dan.new@ev.test');
    assert.equal(user.verified, true);
  });

  test('five wrong codes burn the code (429); requests are rate limited (429); vendor tokens are refused on /me routes', async () => {
    await createUser('eli@ev.test');
    const token = await userToken('eli@ev.test');
    await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'eli@ev.test' } });
    await mailbox.waitFor(() => mails('eli@ev.test').length > 0);
    const code = codeIn(mails('eli@ev.test')[0]);
    const bad = code === '999999' ? '888888' : '999999';
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'eli@ev.test', code: bad } })).status,
      );
    assert.deepEqual(statuses, [400, 400, 400, 400, 429]);
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me/verify`, { token, body: { email: 'eli@ev.test', code } })).status,
      410,
    );
    const more = [];
    for (let i = 0; i < 3; i++)
      more.push((await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'eli@ev.test' } })).status);
    assert.deepEqual(more, [200, 200, 429]);
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me`, { token: vendor, body: { email: 'eli@ev.test' } })).status,
      403,
    );
  });
  test('a vendor email change voids the verification and reset links sent to the old address', async () => {
    const id = await createUser('old@ev.test');
    assert.equal((await t.call('POST', `${U}/v1/${id}/verification-email`, { token: vendor })).status, 201);
    await mailbox.waitFor(() => mails('old@ev.test').length > 0);
    const url = linkIn(mails('old@ev.test')[0]);
    const verifyOld = { userId: id, token: url.searchParams.get('token') };
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset`, { body: { email: 'old@ev.test' } })).status, 201);
    await mailbox.waitFor(() => mailbox.to('old@ev.test').some((m) => m.subject === 'Reset your password'));
    const r = linkIn(mailbox.to('old@ev.test').find((m) => m.subject === 'Reset your password')!);
    const resetOld = { userId: id, token: r.searchParams.get('token') };
    assert.equal(
      (await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: resetOld })).status,
      200,
      'the reset link works before the change',
    );

    const changed = await t.call('PUT', `${U}/v1/${id}/email`, { token: vendor, body: { email: 'new@ev.test' } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    // The old mailbox's links are void: the email is not set back, and the password cannot be reset through it.
    assert.equal((await t.call('POST', `${U}/v1/email/verify`, { body: verifyOld })).status, 410);
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: resetOld })).status, 410);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/passwords/reset/verify`, {
          body: { ...resetOld, password: 'Taken-Over-Secret-99' },
        })
      ).status,
      410,
    );
    const rec = (await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor })).body;
    assert.equal(rec.email, 'new@ev.test');
    assert.equal(rec.verified, false);
    assert.equal(
      (await t.call('POST', LOGIN, { body: { email: 'new@ev.test', password: PASSWORD } })).status,
      200,
      'the password is unchanged',
    );
  });
});
