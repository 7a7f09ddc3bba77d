import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';
import { codeIn, linkIn, startMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
const U = '/identity/resources/users/v1';
const PASSWORD = 'correct horse battery staple';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const signUp = (body: Record<string, unknown>) =>
  t.call('POST', `${U}/signUp`, { body: { provider: 'local', ...body } });
const login = (email: string, password = PASSWORD) =>
  t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password } });
const setSignups = (allowSignups: boolean) =>
  t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowSignups } });

/** The newest activation email to `email` that arrived after `count` earlier ones. */
async function activationMail(email: string, count = 0): Promise<Mail> {
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
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

describe('sign-up switch', () => {
  test('sign-up is refused while allowSignups is off (the default) and creates nothing', async () => {
    const r = await signUp({ email: 'early@su.test', password: PASSWORD, companyName: 'Early' });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-62003');
    const u = await t.call('GET', '/identity/resources/users/v1/email?email=early@su.test', { token: vendor });
    assert.notEqual(u.status, 200);
    assert.equal((await setSignups(true)).status, 201);
  });
});

describe('sign-up and activation by link', () => {
  test('creates the account and its first user (firstUserRole), who activates by the emailed link and is signed in', async () => {
    const r = await signUp({
      email: 'Founder@SU.test',
      password: PASSWORD,
      name: 'Fay Founder',
      companyName: 'Founders Ltd',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.shouldActivate, true);
    const { userId, tenantId } = r.body;
    const acc = await t.call('GET', `/tenants/resources/tenants/v2/${tenantId}`, { token: vendor });
    assert.equal(acc.status, 200);
    assert.equal(acc.body.name, 'Founders Ltd');
    assert.equal(acc.body.creatorEmail, 'founder@su.test');

    // Not activated yet: password sign-in is refused.
    const early = await login('founder@su.test');
    assert.equal(early.status, 403);
    assert.equal(early.body.errorCode, 'GH-62004');

    const mail = await activationMail('founder@su.test');
    const p = params(mail);
    assert.equal(p.userId, userId);
    const strategy = await t.call(
      'GET',
      `${U}/activate/strategy?userId=${p.userId}&token=${encodeURIComponent(p.token)}`,
    );
    assert.deepEqual(strategy.body, { shouldSetPassword: false });

    const a = await t.call('POST', `${U}/activate`, { body: p });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.emailVerified, true);
    const c = claims(a.body.accessToken);
    assert.equal(c.sub, userId);
    assert.equal(c.tenantId, tenantId);
    assert.deepEqual(c.roles, ['admin']);
    assert.equal(c.email_verified, true);

    const again = await t.call('POST', `${U}/activate`, { body: p });
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-62002');
    assert.equal((await login('founder@su.test')).status, 200);

    const { rows } = await t.db.query<{ event_key: string }>(
      'SELECT event_key FROM events WHERE entity_id = $1 ORDER BY seq',
      [userId],
    );
    assert.deepEqual(
      rows.map((e) => e.event_key).filter((k) => k === 'user.created' || k === 'user.activated'),
      ['user.created', 'user.activated'],
    );
  });

  test('bad input: weak password (policy), duplicate email, foreign provider, malformed link', async () => {
    const weak = await signUp({ email: 'weak@su.test', password: 'password' });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.errorCode, 'GH-41001');
    const ok = await signUp({ email: 'weak@su.test', password: PASSWORD });
    assert.equal(ok.status, 201, 'the weak attempt created nothing');
    const dup = await signUp({ email: 'WEAK@su.test', password: PASSWORD });
    assert.equal(dup.status, 409);
    assert.equal((await signUp({ email: 'x@su.test', provider: 'google' })).status, 400);
    assert.equal((await signUp({ email: 'not-an-email' })).status, 400);
    const bad = await t.call('POST', `${U}/activate`, { body: { userId: ok.body.userId, token: 'forged' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-62001');
    const noUser = await t.call('POST', `${U}/activate`, { body: { userId: 'nope', token: 'forged' } });
    assert.equal(noUser.status, 400);
  });

  test('a link of another user does not activate this one; an expired link is 410', async () => {
    const one = await signUp({ email: 'one@su.test', password: PASSWORD });
    const two = await signUp({ email: 'two@su.test', password: PASSWORD });
    const p1 = params(await activationMail('one@su.test'));
    await activationMail('two@su.test');
    const cross = await t.call('POST', `${U}/activate`, { body: { userId: two.body.userId, token: p1.token } });
    assert.equal(cross.status, 400);
    // Time passing is simulated on the row (no waiting in tests).
    await t.db.query("UPDATE one_time_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      one.body.userId,
    ]);
    const late = await t.call('POST', `${U}/activate`, { body: p1 });
    assert.equal(late.status, 410);
    assert.match(late.body.errors[0], /expired/);
  });
});

describe('without a password', () => {
  test('activation asks for a password, checks the policy without using up the link, then sets it', async () => {
    const r = await signUp({ email: 'nopw@su.test', companyName: 'No Password' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const p = params(await activationMail('nopw@su.test'));
    const s = await t.call('GET', `${U}/activate/strategy?userId=${p.userId}&token=${encodeURIComponent(p.token)}`);
    assert.deepEqual(s.body, { shouldSetPassword: true });
    const missing = await t.call('POST', `${U}/activate`, { body: p });
    assert.equal(missing.status, 400);
    assert.match(missing.body.errors[0], /password/);
    const weak = await t.call('POST', `${U}/activate`, { body: { ...p, password: '123456' } });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.errorCode, 'GH-41001');
    const ok = await t.call('POST', `${U}/activate`, { body: { ...p, password: PASSWORD } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await login('nopw@su.test')).status, 200);
  });
});

describe('activation by code and resend', () => {
  test('with the code strategy the email carries a code; wrong code 400, right code signs in, reuse 410', async () => {
    const set = await t.call('POST', '/identity/resources/configurations/v1/activation/strategies', {
      token: vendor,
      body: { strategy: 'code', codeExpiration: 30 },
    });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body, { strategy: 'code', codeExpiration: 30 });
    try {
      const r = await signUp({ email: 'coder@su.test', password: PASSWORD });
      const code = codeIn(await activationMail('coder@su.test'));
      const wrong = await t.call('POST', `${U}/activate/code`, {
        body: { userId: r.body.userId, code: code === '000000' ? '111111' : '000000' },
      });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.errorCode, 'GH-62001');
      const ok = await t.call('POST', `${U}/activate/code`, {
        body: { userId: r.body.userId, code, token: 'ignored-when-a-code-is-given' },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(claims(ok.body.accessToken).sub, r.body.userId);
      assert.equal((await t.call('POST', `${U}/activate/code`, { body: { userId: r.body.userId, code } })).status, 410);
    } finally {
      await t.call('POST', '/identity/resources/configurations/v1/activation/strategies', {
        token: vendor,
        body: { strategy: 'link' },
      });
    }
  });

  test('resend sends a fresh link and the old one stops working; unknown emails get the same answer', async () => {
    const r = await signUp({ email: 'resend@su.test', password: PASSWORD });
    const old = params(await activationMail('resend@su.test'));
    const again = await t.call('POST', `${U}/activate/reset`, { body: { email: 'resend@su.test' } });
    assert.equal(again.status, 201);
    const unknown = await t.call('POST', `${U}/activate/reset`, { body: { email: 'ghost@su.test' } });
    assert.equal(unknown.status, again.status);
    assert.deepEqual(unknown.body, again.body);
    const fresh = params(await activationMail('resend@su.test', 1));
    assert.notEqual(fresh.token, old.token);
    assert.equal((await t.call('POST', `${U}/activate`, { body: old })).status, 410);
    const ok = await t.call('POST', `${U}/activate`, { body: fresh });
    assert.equal(ok.status, 200);
    assert.equal(claims(ok.body.accessToken).sub, r.body.userId);
  });

  test('too many resends for one email answer 429', async () => {
    let last;
    for (let i = 0; i < 6; i++) last = await t.call('POST', `${U}/activate/reset`, { body: { email: 'spam@su.test' } });
    assert.equal(last!.status, 429);
    assert.ok(last!.headers['retry-after']);
  });

  test('the vendor can generate an activation link (not emailed)', async () => {
    const r = await signUp({ email: 'vendorlink@su.test', password: PASSWORD, skipInviteEmail: true });
    const g = await t.call('POST', `${U}/${r.body.userId}/links/generate-activation-token`, { token: vendor });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    assert.equal(new URL(g.body.link).searchParams.get('token'), g.body.token);
    assert.equal(
      (await t.call('POST', `${U}/activate`, { body: { userId: r.body.userId, token: g.body.token } })).status,
      200,
    );
    assert.equal(mailbox.to('vendorlink@su.test').length, 0);
    assert.equal((await t.call('POST', `${U}/${r.body.userId}/links/generate-activation-token`)).status, 401);
  });

  test('a vendor-created user activated through a generated link: user.activated once, when the email is first verified', async () => {
    await account(t, { id: 'su-vendor-made', name: 'Vendor made' });
    const u = await user(t, 'su-vendor-made', { email: 'made@su.test', password: null });
    const activated = async () =>
      (await t.db.query("SELECT 1 FROM events WHERE event_key = 'user.activated' AND entity_id = $1", [u.id])).rows
        .length;
    const activate = async () => {
      const g = await t.call('POST', `${U}/${u.id}/links/generate-activation-token`, { token: vendor });
      const a = await t.call('POST', `${U}/activate`, {
        body: { userId: u.id, token: g.body.token, password: PASSWORD },
      });
      assert.equal(a.status, 200, JSON.stringify(a.body));
    };
    await activate();
    assert.equal(await activated(), 1);
    await activate(); // already verified: a new password, no second activation
    assert.equal(await activated(), 1);
  });
});

describe('the sign-up answer and roleIds', () => {
  const READ_ONLY = 'c784abeb-f295-45fb-84ed-19a1652cfb43'; // the environment's default role (migration 0004)
  const ADMIN = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9'; // first-user role, not a default role
  const rolesOf = async (userId: string, tenantId: string) => {
    const u = await t.call('GET', `${U}/${userId}`, { token: vendor, headers: { 'gatehouse-tenant-id': tenantId } });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    return u.body.roles.map((r: { key: string }) => r.key).sort();
  };
  const traces = async (email: string) =>
    (
      await t.db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM users WHERE email = $1) + (SELECT count(*) FROM tenants WHERE creator_email = $1) AS n`,
        [email],
      )
    ).rows[0].n;

  test('answers provider and email (SignUpUserEmailDto) beside shouldActivate, userId, tenantId; never the password', async () => {
    const r = await signUp({
      email: 'Answer@SU.test',
      password: PASSWORD,
      username: 'answer.user',
      name: 'Ann Answer',
      skipInviteEmail: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), [
      'email',
      'name',
      'provider',
      'shouldActivate',
      'tenantId',
      'userId',
      'username',
    ]);
    assert.equal(r.body.provider, 'local');
    assert.equal(r.body.email, 'answer@su.test');
    assert.equal(r.body.username, 'answer.user');
    assert.equal(r.body.name, 'Ann Answer');
    assert.equal(r.body.shouldActivate, true);
    assert.deepEqual(await rolesOf(r.body.userId, r.body.tenantId), ['admin']);
  });

  test('roleIds may name default roles only: they are added to the first-user roles', async () => {
    const r = await signUp({
      email: 'withdefault@su.test',
      password: PASSWORD,
      roleIds: [READ_ONLY.toUpperCase()],
      skipInviteEmail: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(await rolesOf(r.body.userId, r.body.tenantId), ['admin', 'read-only']);
    const none = await signUp({ email: 'emptyroles@su.test', password: PASSWORD, roleIds: [], skipInviteEmail: true });
    assert.equal(none.status, 201, JSON.stringify(none.body));
    assert.deepEqual(await rolesOf(none.body.userId, none.body.tenantId), ['admin']);
  });

  test('bad input: a non-default role (admin), an unknown id, a malformed list: 400 and nothing is created', async () => {
    const admin = await signUp({ email: 'climber@su.test', password: PASSWORD, roleIds: [READ_ONLY, ADMIN] });
    assert.equal(admin.status, 400, JSON.stringify(admin.body));
    assert.equal(admin.body.errorCode, 'GH-40007');
    assert.match(admin.body.errors[0], new RegExp(`roleIds.*${ADMIN}`));
    assert.doesNotMatch(admin.body.errors[0], new RegExp(READ_ONLY));
    const unknown = await signUp({ email: 'climber@su.test', password: PASSWORD, roleIds: ['not-a-role'] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errorCode, 'GH-40007');
    for (const roleIds of ['admin', [1], [READ_ONLY, READ_ONLY], Array.from({ length: 101 }, (_, i) => `r${i}`)]) {
      const bad = await signUp({ email: 'climber@su.test', password: PASSWORD, roleIds });
      assert.equal(bad.status, 400, JSON.stringify(roleIds));
      assert.equal(bad.body.errorCode, 'GH-10001');
      assert.match(bad.body.errors[0], /roleIds/);
    }
    assert.equal(await traces('climber@su.test'), 0, 'no user, no account');
    assert.equal(mailbox.to('climber@su.test').length, 0);
    const ok = await signUp({ email: 'climber@su.test', password: PASSWORD, skipInviteEmail: true });
    assert.equal(ok.status, 201, 'the refused attempts left nothing behind');
  });

  test("with an account invite token: roleIds may add a default role to the token's roles, never the admin role", async () => {
    await account(t, { id: 'su-joined', name: 'Joined' });
    const role = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      body: [{ key: 'su-editor', name: 'Editor', level: 2 }],
      headers: { 'gatehouse-tenant-id': 'su-joined' },
    });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    const link = await t.call('POST', '/identity/resources/tenants/invites/v1', {
      token: vendor,
      body: { tenantId: 'su-joined', roleIds: [role.body[0].id] },
    });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const up = await signUp({
      email: 'joiner@su.test',
      password: PASSWORD,
      invitationToken: link.body.token,
      roleIds: [ADMIN],
    });
    assert.equal(up.status, 400, JSON.stringify(up.body));
    assert.equal(up.body.errorCode, 'GH-40007');
    assert.equal(await traces('joiner@su.test'), 0);
    const ok = await signUp({
      email: 'joiner@su.test',
      password: PASSWORD,
      invitationToken: link.body.token,
      roleIds: [READ_ONLY],
      skipInviteEmail: true,
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.tenantId, 'su-joined');
    assert.deepEqual(
      await rolesOf(ok.body.userId, 'su-joined'),
      ['read-only', 'su-editor'],
      "the token's role and the requested default role",
    );
  });
});
