import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';
import { codeIn, linkIn, startMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';

let t: TestApp;
let vendor: string;
let admin: string;
let mailbox: Mailbox;
const U = '/identity/resources/users';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const invite = (body: Record<string, unknown>, o: { token?: string; tenant?: string } = {}) =>
  t.call('POST', `${U}/v2`, {
    token: o.token ?? admin,
    body,
    headers: o.tenant ? { 'gatehouse-tenant-id': o.tenant } : {},
  });
const accept = (body: Record<string, unknown>) => t.call('POST', `${U}/v1/invitation/accept`, { body });
const acceptCode = (body: Record<string, unknown>) => t.call('POST', `${U}/v1/invitation/accept/code`, { body });

async function mailTo(email: string, count = 0): Promise<Mail> {
  return mailbox.waitFor((m) => m.to.includes(email) && mailbox.to(email).indexOf(m) >= count);
}
const params = (m: Mail) => {
  const u = linkIn(m);
  return { userId: u.searchParams.get('userId')!, token: u.searchParams.get('token')! };
};

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  await account(t, { id: 'inv-acc', name: 'Acme Invites' });
  await account(t, { id: 'inv-other', name: 'Other Co' });
  admin = (await signedIn(t, await user(t, 'inv-acc', { email: 'boss@inv.test', name: 'Bea Boss' }))).accessToken;
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

describe('invite by link', () => {
  test('an admin invites a new email; the emailed link accepts once and signs the user in to the account', async () => {
    const r = await invite({ email: 'New.Person@inv.test', name: 'Nia New' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.email, 'new.person@inv.test');
    assert.equal(r.body.verified, false);
    assert.deepEqual(r.body.tenantIds, ['inv-acc']);
    const mail = await mailTo('new.person@inv.test');
    assert.match(mail.subject, /Acme Invites/);
    assert.match(mail.text, /Bea Boss/);
    const p = params(mail);
    assert.equal(p.userId, r.body.id);

    const a = await accept(p);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const c = claims(a.body.accessToken);
    assert.equal(c.sub, r.body.id);
    assert.equal(c.tenantId, 'inv-acc');
    assert.equal(a.body.emailVerified, true);
    const again = await accept(p);
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-62002');

    const { rows } = await t.db.query<{ event_key: string; data: Record<string, unknown> }>(
      'SELECT event_key, data FROM events WHERE entity_id = $1 ORDER BY seq',
      [r.body.id],
    );
    const keys = rows.map((e) => e.event_key);
    assert.ok(keys.includes('user.invited') && keys.includes('user.activated'), keys.join());
    assert.equal(rows.find((e) => e.event_key === 'user.invited')!.data.tenantId, 'inv-acc');
  });

  test('a second invitation while one is pending is 409; resend replaces the link; an expired link is 410', async () => {
    const r = await invite({ email: 'pending@inv.test' });
    assert.equal(r.status, 201);
    const first = params(await mailTo('pending@inv.test'));
    const dup = await invite({ email: 'pending@inv.test' });
    assert.equal(dup.status, 409);
    assert.match(dup.body.errors[0], /invitation\/reset/);

    const reset = await t.call('POST', `${U}/v1/invitation/reset`, {
      token: admin,
      body: { email: 'pending@inv.test' },
    });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    const second = params(await mailTo('pending@inv.test', 1));
    assert.notEqual(second.token, first.token);
    assert.equal((await accept(first)).status, 410);
    // Time passing is simulated on the row (no waiting in tests).
    await t.db.query("UPDATE one_time_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      r.body.id,
    ]);
    const late = await accept(second);
    assert.equal(late.status, 410);
    assert.match(late.body.errors[0], /expired/);
    const unknown = await t.call('POST', `${U}/v1/invitation/reset`, {
      token: admin,
      body: { email: 'never-invited@inv.test' },
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-62006');
  });

  test('a forged token or a token of another user is 400', async () => {
    const r = await invite({ email: 'forge@inv.test' });
    const p = params(await mailTo('forge@inv.test'));
    assert.equal((await accept({ userId: r.body.id, token: 'forged' })).status, 400);
    const other = await invite({ email: 'forge2@inv.test' });
    assert.equal((await accept({ userId: other.body.id, token: p.token })).status, 400);
    assert.equal((await accept({ userId: 'not-a-uuid', token: p.token })).status, 400);
    assert.equal((await accept(p)).status, 200, 'the failed attempts did not use the link up');
  });
});

describe('invite by code, existing users, vendors', () => {
  test('with the code strategy an existing user of another account accepts with the code; the membership joins that account', async () => {
    const set = await t.call('POST', '/identity/resources/configurations/v1/invitation/strategies', {
      token: vendor,
      body: { strategy: 'code' },
    });
    assert.equal(set.status, 200);
    assert.equal(set.body.strategy, 'code');
    try {
      const existing = await user(t, 'inv-other', { email: 'mover@inv.test' });
      const r = await invite({ email: 'mover@inv.test' });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.id, existing.id);
      const code = codeIn(await mailTo('mover@inv.test'));
      const wrong = await acceptCode({ userId: r.body.id, code: code === '000000' ? '111111' : '000000' });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.errorCode, 'GH-62001');
      const ok = await acceptCode({ userId: r.body.id, code, token: 'unused' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const c = claims(ok.body.accessToken);
      assert.equal(c.tenantId, 'inv-acc');
      assert.deepEqual([...c.tenantIds].sort(), ['inv-acc', 'inv-other']);
      assert.equal((await acceptCode({ userId: r.body.id, code })).status, 410);
    } finally {
      await t.call('POST', '/identity/resources/configurations/v1/invitation/strategies', {
        token: vendor,
        body: { strategy: 'link' },
      });
    }
  });

  test('a vendor invites with the tenant header (and roles); without it 400; skipInviteEmail sends nothing', async () => {
    const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
    const admin = roles.body.find((x: { key: string }) => x.key === 'admin');
    const r = await invite(
      { email: 'quiet@inv.test', roleIds: [admin.id], skipInviteEmail: true },
      { token: vendor, tenant: 'inv-other' },
    );
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.roles.map((x: { key: string }) => x.key),
      ['admin'],
    );
    assert.equal(mailbox.to('quiet@inv.test').length, 0);
    assert.equal((await invite({ email: 'nohdr@inv.test' }, { token: vendor })).status, 400);
    assert.equal(
      (
        await invite(
          { email: 'badrole@inv.test', roleIds: ['00000000-0000-0000-0000-000000000000'] },
          { token: vendor, tenant: 'inv-other' },
        )
      ).status,
      400,
    );
    assert.equal((await invite({ email: 'x@inv.test' }, { token: vendor, tenant: 'no-such-account' })).status, 404);
  });

  test('a user token without fe.secure.write.users is 403; bad email is 400', async () => {
    const weak = await t.userToken({ tenantId: 'inv-acc', permissions: ['fe.secure.read.users'] });
    assert.equal((await invite({ email: 'z@inv.test' }, { token: weak })).status, 403);
    assert.equal((await invite({ email: 'not-an-email' })).status, 400);
    assert.equal((await t.call('POST', `${U}/v2`, { body: { email: 'z@inv.test' } })).status, 401);
  });

  test('configuration routes answer', async () => {
    const c = await t.call('GET', '/identity/resources/tenants/invites/v1/configuration');
    assert.deepEqual(c.body, { tenantInvitationsAllowed: true, emailsEnabled: true });
    const s = await t.call('GET', '/identity/resources/configurations/v1/invitation/strategies', { token: vendor });
    assert.equal(s.status, 200);
    assert.equal(s.body.codeExpiration, 7 * 24 * 60);
    assert.equal(
      (
        await t.call('POST', '/identity/resources/configurations/v1/invitation/strategies', {
          token: vendor,
          body: { codeExpiration: 0 },
        })
      ).status,
      400,
    );
    assert.equal(
      (await t.call('POST', '/identity/resources/configurations/v1/invitation/strategies', { token: vendor, body: {} }))
        .status,
      400,
    );
  });
});

describe('the documented invite fields (username, password, provider), as user creation takes them', () => {
  const row = async (email: string) =>
    (
      await t.db.query<{ username: string | null; provider: string; has_password: boolean }>(
        'SELECT username, provider, password_hash IS NOT NULL AS has_password FROM users WHERE email = $1',
        [email],
      )
    ).rows[0];

  test('a new user gets the username, the password (sign-in works) and the provider; the answer says so', async () => {
    const r = await invite({
      email: 'creds@inv.test',
      username: 'Creds.User',
      password: PASSWORD,
      name: 'Cy Creds',
      skipInviteEmail: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.username, 'Creds.User');
    assert.equal(r.body.provider, 'local');
    assert.equal(r.body.name, 'Cy Creds');
    assert.equal(r.body.verified, false);
    const l = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { username: 'creds.user', password: PASSWORD },
    });
    assert.equal(l.status, 200, JSON.stringify(l.body));
    assert.equal(claims(l.body.accessToken).sub, r.body.id);

    const sso = await invite({ email: 'sso@inv.test', provider: 'saml' }, { token: vendor, tenant: 'inv-other' });
    assert.equal(sso.status, 201, JSON.stringify(sso.body));
    assert.equal(sso.body.provider, 'saml');
    assert.deepEqual(await row('sso@inv.test'), { username: null, provider: 'saml', has_password: false });
  });

  test('an existing user keeps username and provider; a password for them is a 409 that changes nothing', async () => {
    await user(t, 'inv-other', { email: 'keeper@inv.test', username: 'keeper' });
    const before = (
      await t.db.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE email = 'keeper@inv.test'")
    ).rows[0].password_hash;
    const takeover = await invite({ email: 'keeper@inv.test', password: 'another strong passphrase 42' });
    assert.equal(takeover.status, 409, JSON.stringify(takeover.body));
    assert.equal(takeover.body.errorCode, 'GH-10008');
    assert.match(takeover.body.errors[0], /password/);
    assert.equal(
      (await t.db.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE email = 'keeper@inv.test'"))
        .rows[0].password_hash,
      before,
    );
    assert.equal(
      (
        await t.db.query(
          "SELECT 1 FROM user_tenants ut JOIN users u ON u.id = ut.user_id WHERE u.email = 'keeper@inv.test' AND ut.tenant_id = 'inv-acc'",
        )
      ).rows.length,
      0,
      'not invited',
    );
    const r = await invite({
      email: 'keeper@inv.test',
      username: 'other-name',
      provider: 'google',
      skipInviteEmail: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(await row('keeper@inv.test'), { username: 'keeper', provider: 'local', has_password: true });
  });

  test('bad input: weak password, taken username, unknown provider, malformed username: 4xx and no user', async () => {
    const weak = await invite({ email: 'weakinv@inv.test', password: 'password' });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.errorCode, 'GH-41001');
    const taken = await invite({ email: 'taken@inv.test', username: 'CREDS.user' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.errorCode, 'GH-42003');
    const provider = await invite({ email: 'prov@inv.test', provider: 'myspace' });
    assert.equal(provider.status, 400);
    assert.match(provider.body.errors[0], /provider must be one of local, saml/);
    const username = await invite({ email: 'uname@inv.test', username: 'has space' });
    assert.equal(username.status, 400);
    assert.match(username.body.errors[0], /username/);
    const empty = await invite({ email: 'emptypw@inv.test', password: '' });
    assert.equal(empty.status, 400);
    const { rows } = await t.db.query(
      "SELECT email FROM users WHERE email IN ('weakinv@inv.test', 'taken@inv.test', 'prov@inv.test', 'uname@inv.test', 'emptypw@inv.test')",
    );
    assert.deepEqual(rows, []);
    for (const email of ['weakinv@inv.test', 'taken@inv.test']) assert.equal(mailbox.to(email).length, 0);
  });
});
