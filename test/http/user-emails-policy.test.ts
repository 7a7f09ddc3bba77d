import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/harness.ts';
import { codeIn, startAppWithMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { signedIn, user } from '../fixtures/builders.ts';

const POLICY = '/identity/resources/configurations/v1/user-emails-policy';
const U = '/identity/resources/users';
const LOGIN = '/identity/resources/auth/v1/user';
const PASSWORD = 'Emails-Passw0rd-2024!';
const TENANT = 'uep-acme';
const SUBJECT = 'Verify your email address';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let close: (() => Promise<void>) | undefined;

before(async () => {
  ({ t, vendor, mailbox, close } = await startAppWithMailbox({}, TENANT));
});
after(async () => {
  await close?.();
});

async function createUser(email: string): Promise<{ id: string; token: string }> {
  const s = await signedIn(t, await user(t, TENANT, { email, name: 'E User', password: PASSWORD }));
  return { id: s.userId, token: s.accessToken };
}
const setPolicy = (body: unknown, token = vendor) => t.call('POST', POLICY, { token, body });
const emailOf = async (id: string) =>
  (await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor })).body.email as string;
const mails = (email: string) => mailbox.to(email).filter((m) => m.subject === SUBJECT);

describe('user emails policy', () => {
  test('allowEmailChange is true until set; only the vendor sets it; bad input is a 400 that changes nothing', async () => {
    assert.deepEqual((await t.call('GET', POLICY, { token: vendor })).body, { allowEmailChange: true });
    const { token } = await createUser('reader@uep.test');
    const read = await t.call('GET', POLICY, { token });
    assert.equal(read.status, 200, 'any signed-in user may read it');
    assert.deepEqual(read.body, { allowEmailChange: true });
    assert.equal((await t.call('GET', POLICY)).status, 401);

    const admin = await t.userToken({ tenantId: TENANT, permissions: ['fe.secure.write.securityPolicy'] });
    assert.equal((await setPolicy({ allowEmailChange: false }, admin)).status, 403, 'environment level: vendor only');
    const bad = await setPolicy({ allowEmailChange: 'no' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors.join(' '), /allowEmailChange/);
    assert.equal((await setPolicy({})).status, 400);
    assert.deepEqual((await t.call('GET', POLICY, { token: vendor })).body, { allowEmailChange: true });

    const off = await setPolicy({ allowEmailChange: false });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.deepEqual(off.body, { allowEmailChange: false });
    assert.deepEqual((await t.call('GET', POLICY, { token: vendor })).body, { allowEmailChange: false });
    assert.deepEqual((await setPolicy({ allowEmailChange: true })).body, { allowEmailChange: true });
  });

  test('false: the self-service change is refused (403 GH-41004), a pending one cannot complete; own-address verification and the vendor change still work', async () => {
    assert.equal((await setPolicy({ allowEmailChange: true })).status, 200);
    const ann = await createUser('ann@uep.test');
    // A change asked for while allowed...
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me`, { token: ann.token, body: { email: 'ann.new@uep.test' } })).status,
      200,
    );
    await mailbox.waitFor(() => mails('ann.new@uep.test').length > 0);
    const code = codeIn(mails('ann.new@uep.test')[0]);

    assert.equal((await setPolicy({ allowEmailChange: false })).status, 200);
    // ...cannot be completed once forbidden.
    const pending = await t.call('POST', `${U}/v1/email/me/verify`, {
      token: ann.token,
      body: { email: 'ann.new@uep.test', code },
    });
    assert.equal(pending.status, 403, JSON.stringify(pending.body));
    assert.equal(pending.body.errorCode, 'GH-41004');
    assert.equal(await emailOf(ann.id), 'ann@uep.test');

    const refused = await t.call('POST', `${U}/v1/email/me`, {
      token: ann.token,
      body: { email: 'ann.other@uep.test' },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errorCode, 'GH-41004');
    assert.match(refused.body.errors[0], /allowEmailChange/);
    assert.equal(mails('ann.other@uep.test').length, 0, 'nothing sent');

    // Verifying the current address is not a change.
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me`, { token: ann.token, body: { email: 'ann@uep.test' } })).status,
      200,
    );

    // The vendor's change of a user's email is not subject to the policy.
    const vendorChange = await t.call('PUT', `${U}/v1/${ann.id}/email`, {
      token: vendor,
      body: { email: 'ann.vendor@uep.test' },
    });
    assert.equal(vendorChange.status, 200, JSON.stringify(vendorChange.body));
    assert.equal(await emailOf(ann.id), 'ann.vendor@uep.test');

    // Allowed again: the self-service change works end to end.
    assert.equal((await setPolicy({ allowEmailChange: true })).status, 200);
    const token = (await t.call('POST', LOGIN, { body: { email: 'ann.vendor@uep.test', password: PASSWORD } })).body
      .accessToken;
    assert.equal(
      (await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'ann.final@uep.test' } })).status,
      200,
    );
    await mailbox.waitFor(() => mails('ann.final@uep.test').length > 0);
    const ok = await t.call('POST', `${U}/v1/email/me/verify`, {
      token,
      body: { email: 'ann.final@uep.test', code: codeIn(mails('ann.final@uep.test')[0]) },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await emailOf(ann.id), 'ann.final@uep.test');
  });
});
