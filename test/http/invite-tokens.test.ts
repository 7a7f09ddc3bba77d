import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, linkIn, startMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let admin: string;
let adminId: string;
let mailbox: Mailbox;
const T = '/identity/resources/tenants/invites';
const U = '/identity/resources/users';
const LOGIN = '/identity/resources/auth/v1/user';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const H = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
let editorRoleId: string;

async function mailTo(email: string, pred: (m: Mail) => boolean = () => true, count = 0): Promise<Mail> {
  return mailbox.waitFor((m) => m.to.includes(email) && pred(m) && mailbox.to(email).filter(pred).indexOf(m) >= count);
}
const createUser = async (email: string, tenantId: string) => (await user(t, tenantId, { email })).id;
const members = async (tenantId: string) =>
  (
    await t.db.query<{ user_id: string }>('SELECT user_id::text AS user_id FROM user_tenants WHERE tenant_id = $1', [
      tenantId,
    ])
  ).rows.map((r) => r.user_id);

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  for (const [tenantId, name] of [
    ['it-acme', 'Acme Links'],
    ['it-other', 'Other Co'],
  ]) {
    await account(t, { id: tenantId, name });
  }
  const role = await t.call('POST', '/identity/resources/roles/v1', {
    token: vendor,
    body: [{ key: 'it-editor', name: 'Editor', level: 2 }],
    headers: H('it-acme'),
  });
  assert.equal(role.status, 201, JSON.stringify(role.body));
  editorRoleId = role.body[0].id;
  adminId = await createUser('owner@it.test', 'it-acme');
  admin = (await signedIn(t, { email: 'owner@it.test' })).accessToken;
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

describe("a member's invite link", () => {
  let link: string;

  test('the member creates, reads and verifies the link; the token is sealed, not stored in the clear', async () => {
    assert.equal((await t.call('GET', `${T}/v1/user`, { token: admin })).status, 404);
    // v1 declares no roleIds: one sent anyway is not stored (only v2 sets the roles joiners get).
    const undeclared = await t.call('POST', `${T}/v1/user`, {
      token: admin,
      body: { expiresInMinutes: 60, shouldSendEmail: true, roleIds: [editorRoleId] },
    });
    assert.equal(undeclared.status, 201, JSON.stringify(undeclared.body));
    assert.deepEqual(undeclared.body.roleIds, []);
    const c = await t.call('POST', `${T}/v1/user`, {
      token: admin,
      body: { expiresInMinutes: 60, shouldSendEmail: true },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.tenantId, 'it-acme');
    assert.equal(c.body.userId, adminId);
    assert.equal(c.body.vendorId, t.ctx.environment.id);
    assert.equal(c.body.name, 'Acme Links');
    assert.ok(Date.parse(c.body.expires) > Date.now() + 50 * 60_000);
    link = c.body.token;
    assert.equal((await t.call('GET', `${T}/v1/user`, { token: admin })).body.token, link);
    const v = await t.call('POST', `${T}/v1/verify`, { body: { token: link } });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.tenantId, 'it-acme');
    assert.equal((await t.call('POST', `${T}/v1/verify`, { body: { token: 'forged' } })).status, 400);
    const { rows } = await t.db.query<{ token_hash: string; token_enc: string }>(
      'SELECT token_hash, token_enc FROM tenant_invite_tokens WHERE id = $1',
      [c.body.id],
    );
    assert.ok(!rows[0].token_enc.includes(link) && rows[0].token_hash !== link);
    // The vendor acts on a member with both headers.
    const byVendor = await t.call('GET', `${T}/v1/user`, {
      token: vendor,
      headers: { ...H('it-acme'), 'gatehouse-user-id': adminId },
    });
    assert.equal(byVendor.body.id, c.body.id);
  });

  test('password sign-in with the link joins the account, signs in there and emails the owner', async () => {
    const id = await createUser('joiner@it.test', 'it-other');
    const l = await t.call('POST', LOGIN, {
      body: { email: 'joiner@it.test', password: PASSWORD, invitationToken: link },
    });
    assert.equal(l.status, 200, JSON.stringify(l.body));
    assert.equal(claims(l.body.accessToken).tenantId, 'it-acme');
    assert.deepEqual(new Set(claims(l.body.accessToken).tenantIds), new Set(['it-acme', 'it-other']));
    assert.ok((await members('it-acme')).includes(id));
    const m = await mailTo('owner@it.test', (x) => /accepted/.test(x.subject));
    assert.match(m.subject, /joiner@it\.test/);
    // Signing in again with the link changes nothing; without it the user lands on the active (now joined) account.
    assert.equal(
      (await t.call('POST', LOGIN, { body: { email: 'joiner@it.test', password: PASSWORD, invitationToken: link } }))
        .status,
      200,
    );
  });

  test('a bad link refuses the sign-in (400 unknown, 410 expired) and joins nothing; a wrong password stays 401', async () => {
    const id = await createUser('nope@it.test', 'it-other');
    const bad = await t.call('POST', LOGIN, {
      body: { email: 'nope@it.test', password: PASSWORD, invitationToken: 'forged-token' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-62001');
    const wrongPw = await t.call('POST', LOGIN, {
      body: { email: 'nope@it.test', password: 'wrong password here', invitationToken: link },
    });
    assert.equal(wrongPw.status, 401);
    await t.db.query("UPDATE tenant_invite_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      adminId,
    ]);
    const late = await t.call('POST', LOGIN, {
      body: { email: 'nope@it.test', password: PASSWORD, invitationToken: link },
    });
    assert.equal(late.status, 410);
    assert.equal(late.body.errorCode, 'GH-62002');
    assert.ok(!(await members('it-acme')).includes(id));
    const { rows } = await t.db.query('SELECT 1 FROM sessions WHERE user_id = $1', [id]);
    assert.equal(rows.length, 0, 'no session was started');
    // PATCH gives it a new lifetime; DELETE ends it.
    const p = await t.call('PATCH', `${T}/v1/user`, { token: admin, body: { expiresInMinutes: 30 } });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal((await t.call('POST', `${T}/v1/verify`, { body: { token: link } })).status, 200);
    assert.equal((await t.call('DELETE', `${T}/v1/user`, { token: admin })).status, 200);
    assert.equal((await t.call('POST', `${T}/v1/verify`, { body: { token: link } })).status, 400);
    assert.equal((await t.call('DELETE', `${T}/v1/user`, { token: admin })).status, 404);
  });
});

describe("sign-up and passwordless with a link; the vendor's links", () => {
  test('sign-up with a v2 link (roles) joins that account instead of creating one; activation signs in there', async () => {
    const c = await t.call('POST', `${T}/v2/user`, {
      token: admin,
      body: { expiresInMinutes: 60, shouldSendEmail: false, roleIds: [editorRoleId] },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.deepEqual(c.body.roleIds, [editorRoleId]);
    assert.ok(
      [200, 201].includes(
        (await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowSignups: true } }))
          .status,
      ),
    );
    const accounts = (await t.db.query('SELECT count(*)::int AS n FROM tenants')).rows[0];
    const bad = await t.call('POST', `${U}/v1/signUp`, {
      body: { provider: 'local', email: 'bad@it.test', password: PASSWORD, invitationToken: 'forged' },
    });
    assert.equal(bad.status, 400);
    assert.equal(
      (await t.db.query("SELECT 1 FROM users WHERE email = 'bad@it.test'")).rows.length,
      0,
      'nothing was written',
    );
    const s = await t.call('POST', `${U}/v1/signUp`, {
      body: {
        provider: 'local',
        email: 'newbie@it.test',
        password: PASSWORD,
        companyName: 'Ignored',
        invitationToken: c.body.token,
      },
    });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    assert.equal(s.body.tenantId, 'it-acme');
    assert.deepEqual(
      (await t.db.query('SELECT count(*)::int AS n FROM tenants')).rows[0],
      accounts,
      'no account was created',
    );
    const u = linkIn(await mailTo('newbie@it.test'));
    const a = await t.call('POST', `${U}/v1/activate`, {
      body: { userId: u.searchParams.get('userId'), token: u.searchParams.get('token') },
    });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const cl = claims(a.body.accessToken);
    assert.equal(cl.tenantId, 'it-acme');
    assert.deepEqual(cl.roles, ['it-editor']);
    assert.equal(
      mailbox.to('owner@it.test').filter((m) => /newbie/.test(m.subject)).length,
      0,
      'shouldSendEmail false: no mail to the owner',
    );
  });

  test('an email-code passwordless sign-in with a vendor-made link joins the account', async () => {
    const c = await t.call('POST', `${T}/v1`, { token: vendor, body: { tenantId: 'it-acme' } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.userId, undefined);
    assert.ok(
      Date.parse(c.body.expires) > Date.now() + 6 * 86_400_000,
      'default lifetime: the invitation strategy (7 days)',
    );
    assert.equal(
      (
        await t.call('POST', '/identity/resources/configurations/v1/auth/strategies', {
          token: vendor,
          body: { Code: { active: true } },
        })
      ).status,
      200,
    );
    const id = await createUser('pl@it.test', 'it-other');
    assert.equal(
      (
        await t.call('POST', '/identity/resources/auth/v1/passwordless/code/prelogin', {
          body: { email: 'pl@it.test', invitationToken: c.body.token },
        })
      ).status,
      201,
    );
    const code = codeIn(await mailTo('pl@it.test'));
    const p = await t.call('POST', '/identity/resources/auth/v1/passwordless/code/postlogin', {
      body: { email: 'pl@it.test', token: code, invitationToken: c.body.token },
    });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.equal(claims(p.body.accessToken).tenantId, 'it-acme');
    assert.ok((await members('it-acme')).includes(id));

    const all = await t.call('GET', `${T}/v1/all`, { token: vendor });
    assert.ok(all.body.some((x: { id: string }) => x.id === c.body.id));
    assert.equal((await t.call('GET', `${T}/v1/all`, { token: admin })).status, 403, 'vendor only');
    assert.equal((await t.call('DELETE', `${T}/v1/token/${c.body.id}`, { token: vendor })).status, 200);
    assert.equal((await t.call('DELETE', `${T}/v1/token/${c.body.id}`, { token: vendor })).status, 404);
    assert.equal(
      (
        await t.call('POST', `${T}/v1`, {
          token: vendor,
          body: { tenantId: 'it-acme', roleIds: ['00000000-0000-4000-8000-000000000000'] },
        })
      ).status,
      400,
    );
    assert.equal(
      (await t.call('POST', `${T}/v1`, { token: vendor, body: { tenantId: 'no-such-account' } })).status,
      404,
    );
  });
});

describe('invitation states and resending', () => {
  test('statuses: PendingInvitation, then Activated; PendingLogin; NotActivated; resendActivationEmail; reset/all', async () => {
    const inv = await t.call('POST', `${U}/v2`, { token: admin, body: { email: 'invitee@it.test' } });
    assert.equal(inv.status, 201, JSON.stringify(inv.body));
    const first = await mailTo('invitee@it.test');
    const fresh = await createUser('fresh@it.test', 'it-acme');
    const disabled = await createUser('off@it.test', 'it-acme');
    assert.equal(
      (
        await t.call('POST', `/identity/resources/tenants/users/v1/${disabled}/disable`, {
          token: vendor,
          headers: H('it-acme'),
        })
      ).status,
      200,
    );
    const ids = [inv.body.id, fresh, disabled, adminId];
    const st = async () => {
      const r = await t.call(
        'GET',
        `/identity/resources/tenants/users/v1/statuses?${ids.map((i) => `userIds=${i}`).join('&')}`,
        { token: admin },
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return Object.fromEntries(
        r.body.map((x: { userId: string; tenantsStatuses: { status: string }[] }) => [
          x.userId,
          x.tenantsStatuses[0].status,
        ]),
      );
    };
    assert.deepEqual(await st(), {
      [inv.body.id]: 'PendingInvitation',
      [fresh]: 'PendingLogin',
      [disabled]: 'NotActivated',
      [adminId]: 'Activated',
    });
    const only = await t.call(
      'GET',
      `/identity/resources/tenants/users/v1/statuses?userIds=${inv.body.id}&userIds=${fresh}&userTenantStatuses=PendingLogin`,
      { token: admin },
    );
    assert.deepEqual(only.body, [
      { userId: fresh, tenantsStatuses: [{ tenantId: 'it-acme', status: 'PendingLogin' }] },
    ]);

    // The team screen's resend: a pending invitation goes again (the old link stops working); an active member is 409.
    const r = await t.call('POST', `/team/resources/members/v1/${inv.body.id}/resendActivationEmail`, { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const second = await mailTo('invitee@it.test', () => true, 1);
    assert.notEqual(linkIn(second).searchParams.get('token'), linkIn(first).searchParams.get('token'));
    assert.equal(
      (
        await t.call('POST', `${U}/v1/invitation/accept`, {
          body: { userId: inv.body.id, token: linkIn(first).searchParams.get('token') },
        })
      ).status,
      410,
    );
    const active = await t.call('POST', `/team/resources/members/v1/${adminId}/resendActivationEmail`, {
      token: admin,
    });
    assert.equal(active.status, 409);
    assert.equal(
      (
        await t.call('POST', `/team/resources/members/v1/${inv.body.id}/resendActivationEmail`, {
          token: admin,
          headers: {},
        })
      ).status,
      200,
    );
    const third = await mailTo('invitee@it.test', () => true, 2);

    const all = await t.call('POST', `${U}/v1/invitation/reset/all`, {
      token: vendor,
      body: { email: 'invitee@it.test' },
    });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const fourth = await mailTo('invitee@it.test', () => true, 3);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/invitation/accept`, {
          body: { userId: inv.body.id, token: linkIn(third).searchParams.get('token') },
        })
      ).status,
      410,
    );
    const ok = await t.call('POST', `${U}/v1/invitation/accept`, {
      body: { userId: inv.body.id, token: linkIn(fourth).searchParams.get('token') },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await st())[inv.body.id], 'Activated');
    assert.equal(
      (await t.call('POST', `${U}/v1/invitation/reset/all`, { token: vendor, body: { email: 'invitee@it.test' } }))
        .status,
      404,
    );
  });
});
