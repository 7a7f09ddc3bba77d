import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import { EVENT_KEYS } from '../../src/modules/events/index.ts';
import { totpCode } from '../../src/modules/mfa/totp.ts';

/**
 * Every key of the event catalogue, emitted by the module that owns the flow, arrives at a webhook receiver: each
 * event once (no id twice), signed. Also the events of account removal (its users, its sub-accounts, its grants),
 * plans granted at sign-up, the password change route, and the audit actor of SCIM writes.
 */
interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

const SECRET = 'whsec-coverage-0123456789';
const NEW_PASSWORD = 'another horse battery staple';
const RESET_PASSWORD = 'third horse battery staple 3';
const A = '/identity/resources/auth/v1';
const U = '/identity/resources/users';
const T = '/tenants/resources/tenants/v1';
const SCIM_C = '/directory/resources/v1/configurations/scim2';
const SCIM = '/directory/resources/scim/v2.0';

let t: TestApp;
let vendor: string;
let server: Server;
const got: Received[] = [];

before(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t = await startTestApp({ WEBHOOK_POLL_MS: '20', WEBHOOK_BACKOFF_BASE_MS: '20', WEBHOOK_BACKOFF_MAX_MS: '50' });
  vendor = await t.vendorToken();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  const h = await t.call('POST', '/webhook/custom', {
    token: vendor,
    body: { displayName: 'all', url, secret: SECRET, eventKeys: ['*'] },
  });
  assert.equal(h.status, 201, JSON.stringify(h.body));
});
after(async () => {
  await t?.close();
  await new Promise((r) => server.close(r));
});

async function settled(): Promise<Received[]> {
  for (let i = 0; i < 750; i++) {
    await t.ctx.dispatcher.fanOut();
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT (SELECT count(*)::int FROM events WHERE dispatched_at IS NULL) + (SELECT count(*)::int FROM webhook_deliveries WHERE status IN ('pending', 'delivering')) AS n`,
    );
    if (rows[0].n === 0) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('deliveries never settled');
}

function ok(r: { status: number; body: unknown }, what: string): void {
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
}
const v = (method: string, url: string, body?: unknown, tenant?: string) =>
  t.call(method, url, { token: vendor, body, headers: tenant ? { 'gatehouse-tenant-id': tenant } : {} });
async function scim(method: string, url: string, token: string, body?: unknown) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}
/** A TOTP code of the current step (not in the last second of it, so the server sees the same step). */
async function totp(secret: string): Promise<string> {
  while (Date.now() % 30_000 > 29_000) await new Promise((r) => setTimeout(r, 100));
  return totpCode(secret, Math.floor(Date.now() / 30_000));
}

describe('events: every catalogue key is emitted by its module and arrives once', () => {
  let convId = '';
  let invitedId = '';
  let scimConn: { id: string; token: string };

  test('a scripted series across the modules produces every key; each event is delivered once, signed', async () => {
    // Accounts: parent and grandchild first, then a plan granted at sign-up, then the middle account (gets the plan).
    await account(t, { id: 'cov-p', name: 'P' });
    await account(t, { id: 'cov-g', name: 'G' });
    const plan = await v('POST', '/entitlements/resources/plans/v1', { name: 'Starter', assignOnSignup: true });
    ok(plan, 'plan');
    await account(t, { id: 'cov-c', name: 'C' });
    ok(await v('PUT', `${T}/cov-p`, { name: 'P2' }), 'account update');
    ok(
      await v('POST', '/tenants/resources/hierarchy/v1', { parentTenantId: 'cov-p', childTenantId: 'cov-c' }),
      'c under p',
    );
    ok(
      await v('POST', '/tenants/resources/hierarchy/v1', { parentTenantId: 'cov-c', childTenantId: 'cov-g' }),
      'g under c',
    );
    // No more plans granted at sign-up from here on (the migration below creates an account).
    ok(await v('PATCH', `/entitlements/resources/plans/v1/${plan.body.id}`, { assignOnSignup: false }), 'plan update');

    // A user through the management API: update, sign-in failure and success, password change, sign-out, lock, unlock.
    convId = (await user(t, 'cov-p', { email: 'conv@cov.test', name: 'Con' })).id;
    ok(await v('PUT', `${U}/v1/${convId}`, { name: 'Conny' }), 'user update');
    assert.equal(
      (await t.call('POST', `${A}/user`, { body: { email: 'conv@cov.test', password: 'wrong password 1' } })).status,
      401,
    );
    const login = await t.call('POST', `${A}/user`, { body: { email: 'conv@cov.test', password: PASSWORD } });
    ok(login, 'login');
    const wrong = await t.call('POST', `${U}/v1/passwords/change`, {
      token: login.body.accessToken,
      body: { password: 'not it at all', newPassword: NEW_PASSWORD },
    });
    assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
    assert.equal(wrong.body.errorCode, 'GH-42008');
    const weak = await t.call('POST', `${U}/v1/passwords/change`, {
      token: login.body.accessToken,
      body: { password: PASSWORD, newPassword: 'short' },
    });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.errorCode, 'GH-41001');
    const changed = await t.call('POST', `${U}/v1/passwords/change`, {
      token: login.body.accessToken,
      body: { password: PASSWORD, newPassword: NEW_PASSWORD },
    });
    assert.equal(changed.status, 201, JSON.stringify(changed.body));
    assert.equal(
      (await t.call('POST', `${A}/user`, { body: { email: 'conv@cov.test', password: PASSWORD } })).status,
      401,
      'the old password no longer signs in',
    );
    ok(await t.call('POST', `${A}/logout`, { body: { refreshToken: login.body.refreshToken } }), 'logout');
    ok(await v('POST', `${U}/v1/${convId}/lock`), 'lock');
    ok(await v('POST', `${U}/v1/${convId}/unlock`), 'unlock');

    // MFA: enrol an authenticator (self-service), then the vendor removes it.
    const again = await t.call('POST', `${A}/user`, { body: { email: 'conv@cov.test', password: NEW_PASSWORD } });
    ok(again, 'login with the new password');
    const enroll = await t.call('POST', `${U}/v1/mfa/authenticator/enroll`, { token: again.body.accessToken });
    ok(enroll, 'enroll');
    const secret = new URL(enroll.body.uri).searchParams.get('secret')!;
    ok(
      await t.call('POST', `${U}/v1/mfa/authenticator/enroll/verify`, {
        token: again.body.accessToken,
        body: { token: await totp(secret) },
      }),
      'enroll verify',
    );
    ok(await v('POST', `/identity/resources/vendor-only/users/v1/${convId}/mfa/unenroll`), 'unenroll');

    // Password reset through a vendor-generated link; impersonation.
    const link = await v('POST', `${U}/v1/${convId}/links/generate-password-reset-token`);
    ok(link, 'reset link');
    ok(
      await t.call('POST', `${U}/v1/passwords/reset/verify`, {
        body: { userId: convId, token: link.body.token, password: RESET_PASSWORD },
      }),
      'reset',
    );
    ok(await v('POST', '/identity/resources/impersonation/v1', { userId: convId, reason: 'coverage' }), 'impersonate');

    // Invitation into the middle account; a sign-up activated with a vendor-generated link.
    const inv = await v('POST', `${U}/v2`, { email: 'invitee@cov.test', skipInviteEmail: true }, 'cov-c');
    ok(inv, 'invite');
    invitedId = inv.body.id;
    ok(await v('POST', '/identity/resources/configurations/v1', { allowSignups: true }), 'allow sign-ups');
    const signed = await t.call('POST', `${U}/v1/signUp`, {
      body: {
        provider: 'local',
        email: 'signer@cov.test',
        password: PASSWORD,
        companyName: 'Cov S',
        skipInviteEmail: true,
      },
    });
    ok(signed, 'sign-up');
    const act = await v('POST', `${U}/v1/${signed.body.userId}/links/generate-activation-token`);
    ok(act, 'activation link');
    ok(
      await t.call('POST', `${U}/v1/activate`, { body: { userId: signed.body.userId, token: act.body.token } }),
      'activate',
    );

    // An approval flow: the invitee approves the converted user's request (approval.requested, approval.completed).
    const AF = '/identity/resources/approval-flows/v1';
    const flow = await v('POST', AF, {
      name: 'Cov',
      channels: { email: false, sms: false },
      configuration: {},
      steps: [{ approverSelector: { type: 'users', userIds: [invitedId] } }],
    });
    ok(flow, 'approval flow');
    const exec = await t.call('POST', `${AF}/${flow.body.id}/execute`, {
      token: vendor,
      headers: { 'gatehouse-user-id': convId },
      body: { executionData: { amount: 1 } },
    });
    ok(exec, 'approval execute');
    ok(
      await v('POST', `${AF}/approver-action`, {
        approved: true,
        approvalFlowExecutionId: exec.body.approvalFlowExecutionId,
        approverId: invitedId,
        approvalFlowStepId: flow.body.steps[0].id,
      }),
      'approve',
    );

    // SCIM: a connection provisions a user and a group, then deprovisions the user.
    scimConn = (await v('POST', SCIM_C, { source: 'other', syncToUserManagement: true }, 'cov-p')).body;
    const su = await scim('POST', `${SCIM}/${scimConn.id}/Users`, scimConn.token, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'scimmy@cov.test',
    });
    ok(su, 'scim user');
    ok(
      await scim('POST', `${SCIM}/${scimConn.id}/Groups`, scimConn.token, {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: 'Cov',
        members: [{ value: su.body.id }],
      }),
      'scim group',
    );
    ok(await scim('DELETE', `${SCIM}/${scimConn.id}/Users/${su.body.id}`, scimConn.token), 'scim delete');

    // A bulk account migration (migration.completed); then the middle account goes (its user, grant, sub-account).
    const mig = await v('POST', '/tenants/resources/migrations/v1/tenants', {
      tenants: [{ tenantId: 'cov-m', name: 'M' }],
    });
    ok(mig, 'migration');
    for (let i = 0; i < 200; i++) {
      if (
        (await v('GET', `/tenants/resources/migrations/v1/tenants/status/${mig.body.migrationId}`)).body.state ===
        'completed'
      )
        break;
      await new Promise((r) => setTimeout(r, 25));
    }
    ok(await v('DELETE', `${T}/cov-c`), 'delete account c');
    ok(await v('DELETE', `${U}/v1/${convId}`), 'delete user');

    const received = await settled();
    const keys = new Set(received.map((g) => g.body.eventKey));
    for (const key of EVENT_KEYS) assert.ok(keys.has(key), `${key} arrived (got ${[...keys].sort().join(', ')})`);
    assert.equal(new Set(received.map((g) => g.body.id)).size, received.length, 'no event arrives twice');
    const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    assert.equal(received.length, rows[0].n, 'every event of the outbox arrived');
    for (const g of received) {
      const expected = `v1=${createHmac('sha256', SECRET).update(`${g.headers['gatehouse-webhook-timestamp']}.${g.raw}`).digest('hex')}`;
      assert.equal(g.headers['gatehouse-signature'], expected);
      for (const s of [PASSWORD, NEW_PASSWORD, RESET_PASSWORD, link.body.token, act.body.token, scimConn.token])
        assert.ok(!g.raw.includes(s), `${g.body.eventKey} carries no secret`);
    }
  });

  test('account removal: user.deleted for its users, account.moved for its sub-accounts, entitlement.revoked for its grants, in its transaction', async () => {
    const all = got.map((g) => g.body);
    const of = (key: string, pred: (d: any) => boolean = () => true) =>
      all.filter((b) => b.eventKey === key && pred(b.data));
    // Sign-up grant of the middle account; the grant goes with the account.
    const granted = of('entitlement.granted', (d) => d.tenantId === 'cov-c');
    assert.equal(granted.length, 1);
    assert.equal(granted[0].data.via, 'assign-on-signup');
    assert.equal(
      of('entitlement.granted').length,
      1,
      'accounts created while no plan was assigned at sign-up got none',
    );
    const revoked = of('entitlement.revoked', (d) => d.tenantId === 'cov-c');
    assert.deepEqual(
      revoked.map((b) => b.data),
      [
        {
          entitlementId: granted[0].data.entitlementId,
          planId: granted[0].data.planId,
          tenantId: 'cov-c',
          userId: null,
          reason: 'account_deleted',
        },
      ],
    );
    // The grandchild moved up to the deleted account's parent.
    assert.deepEqual(
      of('account.moved', (d) => d.tenantId === 'cov-g').map((b) => b.data),
      [
        { tenantId: 'cov-g', previousParentTenantId: null, parentTenantId: 'cov-c' },
        { tenantId: 'cov-g', previousParentTenantId: 'cov-c', parentTenantId: 'cov-p', reason: 'parent_deleted' },
      ],
    );
    // The invited member (its only account) is removed with the account.
    assert.deepEqual(
      of('user.deleted', (d) => d.userId === invitedId).map((b) => b.data),
      [
        {
          userId: invitedId,
          email: 'invitee@cov.test',
          tenantId: 'cov-c',
          scope: 'account',
          reason: 'account_deleted',
        },
      ],
    );
    assert.equal(
      (await t.db.query('SELECT id FROM users WHERE id = $1', [invitedId])).rows.length,
      0,
      'the user had no other account',
    );
    // Order per entity: the account's own events end with account.deleted.
    assert.deepEqual(
      all.filter((b) => b.tenantId === 'cov-c' && b.eventKey.startsWith('account.')).map((b) => b.eventKey),
      ['account.created', 'account.moved', 'account.deleted'],
    );
    assert.deepEqual(
      of('user.password_changed').map((b) => b.data),
      [{ userId: convId, tenantId: 'cov-p' }],
    );
  });

  test('a SCIM write is audited with the connection as actor, in its account', async () => {
    const r = await t.call('GET', `/audits?actor=${scimConn.id}&sortDirection=asc`, { token: vendor });
    assert.equal(r.status, 200);
    const writes = r.body.data.map((e: any) => [e.action, e.actor.type, e.actor.id, e.tenantId, e.outcome]);
    assert.deepEqual(writes, [
      ['scim.user_provisioned', 'scim', scimConn.id, 'cov-p', 'success'],
      ['scim.group_provisioned', 'scim', scimConn.id, 'cov-p', 'success'],
      ['scim.user_deprovisioned', 'scim', scimConn.id, 'cov-p', 'success'],
    ]);
    // A wrong token is not attributed to the connection.
    assert.equal(
      (
        await scim('POST', `${SCIM}/${scimConn.id}/Users`, 'ghscim_wrong', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: 'x@cov.test',
        })
      ).status,
      401,
    );
    const after = await t.call('GET', `/audits?actor=${scimConn.id}`, { token: vendor });
    assert.equal(after.body.total, 3);
  });
});
