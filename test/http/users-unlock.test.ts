import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';
import { linkIn, startMailbox } from '../helpers/mailbox.ts';

let t: TestApp;
let vendor: string;
const U = '/identity/resources/users';
const PASSWORD = 'a long enough password 42!';
let ada: any;
let bob: any;

const signIn = (email: string, password: string) =>
  t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password } });
const unlock = (token: unknown) => t.call('POST', `${U}/v3/me/unlock`, { body: { token } });
const generate = (userId: string) => t.call('POST', `${U}/v1/${userId}/links/generate-unlock-token`, { token: vendor });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'ul-a', name: 'A' });
  ada = (await user(t, 'ul-a', { email: 'ada@ul.test', password: PASSWORD })).body;
  bob = (await user(t, 'ul-a', { email: 'bob@ul.test', password: PASSWORD })).body;
  // The default lockout policy: 5 wrong passwords lock the user for 15 minutes.
  for (let i = 0; i < 5; i++) assert.equal((await signIn('ada@ul.test', 'wrong password')).status, 401);
  const locked = await signIn('ada@ul.test', PASSWORD);
  assert.equal(locked.status, 403, JSON.stringify(locked.body));
  assert.equal(locked.body.errorCode, 'GH-43005');
});
after(async () => t?.close());

describe('self-service unlock', () => {
  test('an unlock token is issued only for a locked user (409 otherwise; 404 for an unknown user); a user token is refused', async () => {
    const r = await generate(bob.id);
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal((await generate('00000000-0000-4000-8000-000000000000')).status, 404);
    const user = await t.userToken({ tenantId: 'ul-a', sub: bob.id, permissions: ['*'] });
    assert.equal((await t.call('POST', `${U}/v1/${ada.id}/links/generate-unlock-token`, { token: user })).status, 403);
  });

  test('the token unlocks the user, once; sign-in works again; the token is stored hashed', async () => {
    const first = await generate(ada.id);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await generate(ada.id);
    assert.equal(second.body.userId, ada.id);
    assert.ok(second.body.token.length >= 40 && Date.parse(second.body.expiresAt) > Date.now());
    const { rows } = await t.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM user_unlock_tokens WHERE user_id = $1',
      [ada.id],
    );
    assert.ok(rows.length >= 1 && rows.every((r) => r.token_hash !== second.body.token));

    // A newer token voids the earlier one.
    const stale = await unlock(first.body.token);
    assert.equal(stale.status, 400, JSON.stringify(stale.body));
    assert.equal((await signIn('ada@ul.test', PASSWORD)).status, 403, 'still locked after a refused token');

    const ok = await unlock(second.body.token);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const vendorView = await t.call('GET', `/identity/resources/vendor-only/users/v1/${ada.id}`, { token: vendor });
    assert.equal(vendorView.body.isLocked, false);
    const back = await signIn('ada@ul.test', PASSWORD);
    assert.equal(back.status, 200, JSON.stringify(back.body));

    const again = await unlock(second.body.token);
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-62002');
    const { rows: ev } = await t.db.query<{ data: any }>(
      "SELECT data FROM events WHERE event_key = 'user.unlocked' AND entity_id = $1",
      [ada.id],
    );
    assert.deepEqual(
      ev.map((e) => e.data.reason),
      ['self_service'],
    );
  });

  test('bad input: unknown token 400, missing or empty token 400, expired token 410', async () => {
    const unknown = await unlock('not-a-token');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errorCode, 'GH-62001');
    assert.equal((await unlock('')).status, 400);
    assert.equal((await t.call('POST', `${U}/v3/me/unlock`, { body: {} })).status, 400);
    assert.equal((await unlock(42)).status, 400);

    for (let i = 0; i < 5; i++) await signIn('bob@ul.test', 'wrong password');
    const issued = await generate(bob.id);
    assert.equal(issued.status, 201);
    await t.db.query("UPDATE user_unlock_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      bob.id,
    ]);
    const expired = await unlock(issued.body.token);
    assert.equal(expired.status, 410);
    assert.equal((await signIn('bob@ul.test', PASSWORD)).status, 403, 'an expired token unlocks nothing');
  });
});

describe('the lockout email', () => {
  test('a user the lockout policy locks is emailed a one-time unlock link that works', async () => {
    const mailbox = await startMailbox();
    try {
      await mailbox.configure(t);
      const cy = (await user(t, 'ul-a', { email: 'cy@ul.test', password: PASSWORD })).body;
      for (let i = 0; i < 5; i++) assert.equal((await signIn('cy@ul.test', 'wrong password')).status, 401);
      assert.equal((await signIn('cy@ul.test', PASSWORD)).status, 403, 'locked');
      await mailbox.waitFor(() => mailbox.to('cy@ul.test').some((m) => m.subject === 'Your account was locked'));
      const mails = mailbox.to('cy@ul.test').filter((m) => m.subject === 'Your account was locked');
      assert.equal(mails.length, 1, 'one notice for one lock');
      const url = linkIn(mails[0]);
      assert.equal(url.pathname, '/account/unlock');
      const token = url.searchParams.get('token');
      assert.ok(token);
      assert.equal((await unlock(token)).status, 200);
      assert.equal((await unlock(token)).status, 410, 'the link works once');
      const ok = await signIn('cy@ul.test', PASSWORD);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.userId, cy.id);
    } finally {
      await mailbox.close();
    }
  });
});
