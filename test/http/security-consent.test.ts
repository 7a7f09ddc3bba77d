import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/harness.ts';
import { linkIn, startAppWithMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

// Joining an account needs the person's consent; an account sees only its part of a user; a password an account
// administrator chose for someone else is temporary and cannot accept another account's invitation.

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let close: () => Promise<void>;
let acmeAdmin: string;
let betaAdmin: string;
let betaAdminId: string;
const U = '/identity/resources/users';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

const signIn = (email: string, password = PASSWORD) =>
  t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password } });
const tokenOf = async (email: string, password = PASSWORD) => (await signedIn(t, { email, password })).accessToken;
const invite = (token: string, body: Record<string, unknown>) => t.call('POST', `${U}/v2`, { token, body });
const mailTo = (email: string): Promise<Mail> => mailbox.waitFor((m) => m.to.includes(email));
const linkParams = (m: Mail) => {
  const u = linkIn(m);
  return { userId: u.searchParams.get('userId')!, token: u.searchParams.get('token')! };
};

before(async () => {
  const started = await startAppWithMailbox({ CODE_RATE_LIMIT_PER_IP: '1000' }, 'acme');
  ({ t, vendor, mailbox, close } = started);
  await account(t, { id: 'beta', name: 'Beta' });
  await user(t, 'acme', { email: 'admin@acme.test', name: 'Acme Admin' });
  betaAdminId = (await user(t, 'beta', { email: 'admin@beta.test', name: 'Beta Admin' })).id;
  acmeAdmin = await tokenOf('admin@acme.test');
  betaAdmin = await tokenOf('admin@beta.test');
});
after(async () => close?.());

describe('inviting an existing user of another account', () => {
  let victimId: string;
  before(async () => {
    victimId = (
      await user(t, 'acme', {
        email: 'victim@acme.test',
        name: 'Vic Tim',
        fields: { phoneNumber: '+15550001111', vendorMetadata: '{"plan":"secret"}' },
      })
    ).id;
    await tokenOf('victim@acme.test'); // a last sign-in to leak
  });

  test('the invitation is pending: the inviting account sees no other account, phones, last sign-in or vendor metadata', async () => {
    const r = await invite(betaAdmin, { email: 'victim@acme.test', skipInviteEmail: true });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.invitationPending, true);
    for (const body of [r.body, (await t.call('GET', `${U}/v1/${victimId}`, { token: betaAdmin })).body]) {
      assert.equal(body.id, victimId);
      assert.equal(body.email, 'victim@acme.test');
      assert.deepEqual(body.tenantIds, []);
      assert.deepEqual(
        body.tenants.map((x: { tenantId: string; pending?: boolean }) => [x.tenantId, x.pending]),
        [['beta', true]],
      );
      assert.deepEqual(body.phoneNumbers, []);
      assert.equal(body.phoneNumber, undefined);
      assert.equal(body.lastLogin, null);
      assert.equal(body.vendorMetadata, '{}');
      assert.doesNotMatch(JSON.stringify(body), /"acme"|secret|5550001111/);
    }
    const list = await t.call('GET', `${U}/v2?_limit=200`, { token: betaAdmin });
    assert.equal(list.status, 200);
    const listed = list.body.items.find((u: { id: string }) => u.id === victimId);
    assert.equal(listed.invitationPending, true);
    assert.doesNotMatch(JSON.stringify(list.body), /"acme"|secret|5550001111/);
    const again = await invite(betaAdmin, { email: 'victim@acme.test', skipInviteEmail: true });
    assert.equal(again.status, 409);
    assert.match(again.body.errors[0], /already invited/);
  });

  test('a pending membership gives no access: not in the token, not switchable, not among my accounts', async () => {
    const token = await tokenOf('victim@acme.test');
    assert.deepEqual(claims(token).tenantIds, ['acme']);
    const sw = await t.call('PUT', `${U}/v1/tenant`, { token, body: { tenantId: 'beta' } });
    assert.equal(sw.status, 403, JSON.stringify(sw.body));
    const mine = await t.call('GET', `${U}/v3/me/tenants`, { token });
    assert.deepEqual(
      mine.body.tenants.map((a: { tenantId: string }) => a.tenantId),
      ['acme'],
    );
    const me = await t.call('GET', `${U}/v1/me/invitations`, { token });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.deepEqual(
      me.body.map((i: { tenantId: string; name: string; invitedBy: string }) => [i.tenantId, i.name, i.invitedBy]),
      [['beta', 'Beta', betaAdminId]],
    );
  });

  test('only the own session answers: a token acting for someone (act claim) is refused', async () => {
    const acting = await t.ctx.keys.sign(
      {
        type: 'userToken',
        sub: victimId,
        email: 'victim@acme.test',
        tenantId: 'acme',
        tenantIds: ['acme'],
        roles: [],
        permissions: [],
        aud: t.ctx.environment.id,
        act: { sub: 'someone-else' },
      },
      300,
    );
    const r = await t.call('POST', `${U}/v1/me/invitations/beta/accept`, { token: acting });
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-42091');
  });

  test('the signed-in user accepts; then the account sees only itself (no vendor metadata) and the environment sees all', async () => {
    const token = await tokenOf('victim@acme.test');
    const r = await t.call('POST', `${U}/v1/me/invitations/beta/accept`, { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(claims(await tokenOf('victim@acme.test')).tenantIds, ['acme', 'beta']);
    const seen = await t.call('GET', `${U}/v1/${victimId}`, { token: betaAdmin });
    assert.equal(seen.status, 200);
    assert.deepEqual(seen.body.tenantIds, ['beta']);
    assert.deepEqual(
      seen.body.tenants.map((x: { tenantId: string }) => x.tenantId),
      ['beta'],
    );
    assert.equal(seen.body.vendorMetadata, '{}');
    assert.equal(seen.body.invitationPending, undefined);
    assert.doesNotMatch(JSON.stringify(seen.body), /"acme"|secret/);
    const env = await t.call('GET', `${U}/v1/${victimId}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'beta' },
    });
    assert.equal(env.status, 200);
    assert.deepEqual([...env.body.tenantIds].sort(), ['acme', 'beta']);
    assert.equal(JSON.parse(env.body.vendorMetadata).plan, 'secret');
    const none = await t.call('GET', `${U}/v1/me/invitations`, { token });
    assert.deepEqual(none.body, []);
  });

  test('declining removes the pending membership', async () => {
    const id = (await user(t, 'acme', { email: 'decliner@acme.test' })).id;
    assert.equal((await invite(betaAdmin, { email: 'decliner@acme.test', skipInviteEmail: true })).status, 201);
    const token = await tokenOf('decliner@acme.test');
    const r = await t.call('POST', `${U}/v1/me/invitations/beta/decline`, { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await t.call('GET', `${U}/v1/${id}`, { token: betaAdmin })).status, 404);
    const again = await t.call('POST', `${U}/v1/me/invitations/beta/accept`, { token });
    assert.equal(again.status, 404);
  });

  test('the emailed invitation link accepts a pending membership and signs in to the account', async () => {
    const id = (await user(t, 'acme', { email: 'linker@acme.test' })).id;
    assert.equal((await invite(betaAdmin, { email: 'linker@acme.test' })).status, 201);
    assert.deepEqual(claims(await tokenOf('linker@acme.test')).tenantIds, ['acme']);
    const a = await t.call('POST', `${U}/v1/invitation/accept`, { body: linkParams(await mailTo('linker@acme.test')) });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(claims(a.body.accessToken).sub, id);
    assert.equal(claims(a.body.accessToken).tenantId, 'beta');
    assert.deepEqual(claims(await tokenOf('linker@acme.test')).tenantIds, ['acme', 'beta']);
  });

  test('the environment adds an existing user at once; an administrator inviting a new email makes a member at once', async () => {
    await user(t, 'acme', { email: 'direct@acme.test' });
    const v = await t.call('POST', `${U}/v2`, {
      token: vendor,
      body: { email: 'direct@acme.test', skipInviteEmail: true },
      headers: { 'gatehouse-tenant-id': 'beta' },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.deepEqual(claims(await tokenOf('direct@acme.test')).tenantIds, ['acme', 'beta']);
    const n = await invite(betaAdmin, { email: 'newcomer@beta.test', skipInviteEmail: true });
    assert.equal(n.status, 201);
    assert.deepEqual(n.body.tenantIds, ['beta']);
    assert.equal(n.body.invitationPending, undefined);
  });
});

describe("an administrator's password for someone else is temporary", () => {
  const P = 'admin chosen password 123';
  test('it gives no access to another account, cannot accept there, and stops working once the invitation link is used', async () => {
    const created = await t.call('POST', `${U}/v1`, {
      token: acmeAdmin,
      body: { email: 'future@elsewhere.test', password: P },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await invite(betaAdmin, { email: 'future@elsewhere.test' })).status, 201);

    const withP = await signIn('future@elsewhere.test', P);
    assert.equal(withP.status, 200, JSON.stringify(withP.body));
    const token = withP.body.accessToken as string;
    assert.deepEqual(claims(token).tenantIds, ['acme']);
    assert.equal((await t.call('PUT', `${U}/v1/tenant`, { token, body: { tenantId: 'beta' } })).status, 403);
    const refused = await t.call('POST', `${U}/v1/me/invitations/beta/accept`, { token });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.errorCode, 'GH-42090');
    assert.deepEqual(claims(await tokenOf('future@elsewhere.test', P)).tenantIds, ['acme']);

    const a = await t.call('POST', `${U}/v1/invitation/accept`, {
      body: linkParams(await mailTo('future@elsewhere.test')),
    });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(claims(a.body.accessToken).tenantId, 'beta');
    assert.equal((await signIn('future@elsewhere.test', P)).status, 401);
    // The session started with the administrator's password ended with it.
    const refreshed = await t.call('POST', '/identity/resources/auth/v1/user/token/refresh', {
      body: { refreshToken: withP.body.refreshToken },
    });
    assert.equal(refreshed.status, 401, JSON.stringify(refreshed.body));
  });

  test("an environment-set password is the owner's: the signed-in acceptance works with it", async () => {
    await user(t, 'acme', { email: 'owned@acme.test' });
    assert.equal((await invite(betaAdmin, { email: 'owned@acme.test', skipInviteEmail: true })).status, 201);
    const token = await tokenOf('owned@acme.test');
    assert.equal((await t.call('POST', `${U}/v1/me/invitations/beta/accept`, { token })).status, 200);
  });
});
