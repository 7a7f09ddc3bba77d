import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, VENDOR, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const CONFIG = '/identity/resources/configurations/v1/delegation';
const DELEGATE = '/identity/resources/auth/v1/delegation/token';
const IMPERSONATE = '/identity/resources/impersonation/v1';
const USERS = '/identity/resources/users/v2';
const IMP = 'fe.secure.impersonate.users';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const H = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
let permIds: Record<string, string> = {};
let aliceId = '';
let bobId = '';
let ginaId = '';

/** An account API token with the given permission keys, signed in: its access token and client id. */
async function service(tenantId: string, keys: string[]) {
  const c = await t.call('POST', '/identity/resources/tenants/api-tokens/v1', {
    token: vendor,
    headers: H(tenantId),
    body: { permissionIds: keys.map((k) => permIds[k]) },
  });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const s = await t.call('POST', '/identity/resources/auth/v2/api-token', {
    body: { clientId: c.body.clientId, secret: c.body.secret },
  });
  assert.equal(s.status, 200);
  return { token: s.body.access_token as string, clientId: c.body.clientId as string };
}
const setDelegation = (enabled: boolean) => t.call('POST', CONFIG, { token: vendor, body: { enabled } });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['acme', 'globex']) await account(t, { id: tenantId });
  aliceId = (await user(t, 'acme', { email: 'alice@acme.test' })).id; // admin
  bobId = (await user(t, 'acme', { email: 'bob@acme.test' })).id; // read-only
  ginaId = (await user(t, 'globex', { email: 'gina@globex.test' })).id;
  permIds = Object.fromEntries(
    (await t.call('GET', '/identity/resources/permissions/v1', { token: vendor })).body.map((x: any) => [x.key, x.id]),
  );
});
after(async () => t?.close());

describe('delegation configuration', () => {
  test('off by default; the vendor turns it on and off; user tokens may not', async () => {
    const get = await t.call('GET', CONFIG, { token: vendor });
    assert.equal(get.status, 200);
    assert.deepEqual(get.body, { enabled: false });
    const on = await setDelegation(true);
    assert.equal(on.status, 200);
    assert.deepEqual(on.body, { enabled: true });
    assert.deepEqual((await t.call('GET', CONFIG, { token: vendor })).body, { enabled: true });
    assert.equal(
      (await t.call('GET', '/identity/resources/configurations/v1', { token: vendor })).body.delegationEnabled,
      true,
    );
    assert.deepEqual((await setDelegation(false)).body, { enabled: false });
    const admin = await t.userToken({ sub: aliceId, tenantId: 'acme', permissions: ['*'] });
    assert.equal((await t.call('POST', CONFIG, { token: admin, body: { enabled: true } })).status, 403);
    assert.equal((await t.call('POST', CONFIG, { token: vendor, body: { enabled: 'yes' } })).status, 400);
  });
});

describe('delegation: an API token acts on behalf of a user', () => {
  test('refused while delegation is off', async () => {
    await setDelegation(false);
    const svc = await service('acme', ['fe.secure.read.users']);
    const r = await t.call('POST', DELEGATE, { token: svc.token, body: { userId: bobId } });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-64007');
  });

  test('the token carries act, the user as sub, and only permissions both hold; it is recorded', async () => {
    await setDelegation(true);
    const svc = await service('acme', ['fe.secure.read.users', 'fe.secure.write.users']);
    const r = await t.call('POST', DELEGATE, { token: svc.token, body: { userId: bobId } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.token_type, 'Bearer');
    assert.equal(r.body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
    const c = claims(r.body.access_token);
    assert.equal(c.type, 'userToken');
    assert.equal(c.sub, bobId);
    assert.equal(c.tenantId, 'acme');
    assert.deepEqual(c.act, { sub: svc.clientId, type: 'tenantApiToken' });
    assert.deepEqual(c.permissions, ['fe.secure.read.users'], 'bob cannot write users; the token cannot read roles');
    assert.equal((await t.call('GET', USERS, { token: r.body.access_token })).status, 200);
    assert.equal(
      (
        await t.call('POST', '/identity/resources/users/v1', {
          token: r.body.access_token,
          body: { email: 'z@acme.test' },
        })
      ).status,
      403,
    );
    const acts = await t.call('GET', IMPERSONATE, { token: vendor, headers: H('acme') });
    const rec = acts.body.find((a: any) => a.id === c.sid);
    assert.ok(rec, "recorded under the token's sid");
    assert.equal(rec.kind, 'delegation');
    assert.equal(rec.userId, bobId);
    assert.deepEqual(rec.actor, { type: 'tenantApiToken', id: svc.clientId });
  });

  test('only account API tokens delegate, and only for users of their own account', async () => {
    await setDelegation(true);
    const svc = await service('acme', ['fe.secure.read.users']);
    const other = await t.call('POST', DELEGATE, { token: svc.token, body: { userId: ginaId } });
    assert.equal(other.status, 404);
    const unknown = await t.call('POST', DELEGATE, {
      token: svc.token,
      body: { userId: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(unknown.status, 404);
    assert.equal((await t.call('POST', DELEGATE, { token: svc.token, body: { userId: 'bob' } })).status, 400);
    const human = await t.userToken({ sub: aliceId, tenantId: 'acme', permissions: ['*'] });
    const byUser = await t.call('POST', DELEGATE, { token: human, body: { userId: bobId } });
    assert.equal(byUser.status, 403);
    assert.equal(byUser.body.errorCode, 'GH-20003');
    assert.equal((await t.call('POST', DELEGATE, { token: vendor, body: { userId: bobId } })).status, 403);
    const mine = await t.call('POST', '/identity/resources/users/api-tokens/v1', {
      token: vendor,
      body: {},
      headers: { ...H('acme'), 'gatehouse-user-id': aliceId },
    });
    const personal = await t.call('POST', '/identity/resources/auth/v2/api-token', {
      body: { clientId: mine.body.clientId, secret: mine.body.secret },
    });
    assert.equal(
      (await t.call('POST', DELEGATE, { token: personal.body.access_token, body: { userId: bobId } })).status,
      403,
      'a user API token does not delegate',
    );
  });
});

describe('impersonation', () => {
  test("a vendor impersonates a user: the user's own token with act and amr, recorded, event emitted", async () => {
    const r = await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: bobId, reason: 'ticket 42' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.userId, bobId);
    assert.equal(r.body.tenantId, 'acme');
    const c = claims(r.body.accessToken);
    assert.equal(c.type, 'userToken');
    assert.equal(c.sub, bobId);
    assert.deepEqual(c.act, { sub: VENDOR.clientId, type: 'vendor' });
    assert.deepEqual(c.amr, ['impersonation']);
    assert.deepEqual(c.roles, ['read-only']);
    assert.equal(c.sid, r.body.impersonationId);
    assert.equal((await t.call('GET', USERS, { token: r.body.accessToken })).status, 200);

    const acts = await t.call('GET', IMPERSONATE, { token: vendor });
    const rec = acts.body.find((a: any) => a.id === r.body.impersonationId);
    assert.equal(rec.kind, 'impersonation');
    assert.equal(rec.reason, 'ticket 42');
    assert.deepEqual(rec.actor, { type: 'vendor', id: VENDOR.clientId });
    const { rows } = await t.db.query<any>(
      "SELECT * FROM events WHERE event_key = 'user.impersonated' AND entity_id = $1",
      [bobId],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].tenant_id, 'acme');
    assert.equal(rows[0].data.impersonationId, r.body.impersonationId);

    const ordinary = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { email: 'bob@acme.test', password: PASSWORD },
    });
    assert.equal(claims(ordinary.body.accessToken).act, undefined, 'ordinary sign-ins carry no act');
  });

  test('a vendor may name the account; a user of another account is a 404', async () => {
    const wrong = await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: ginaId, tenantId: 'acme' } });
    assert.equal(wrong.status, 404);
    const right = await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: ginaId }, headers: H('globex') });
    assert.equal(right.status, 200);
    assert.equal(right.body.tenantId, 'globex');
    assert.equal(
      (await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: '00000000-0000-4000-8000-000000000000' } }))
        .status,
      404,
    );
    assert.equal((await t.call('POST', IMPERSONATE, { token: vendor, body: {} })).status, 400);
  });

  test('an admin needs fe.secure.impersonate.users, stays in their account, and cannot gain permissions', async () => {
    const alice = (await signedIn(t, { email: 'alice@acme.test' })).accessToken;
    const denied = await t.call('POST', IMPERSONATE, { token: alice, body: { userId: bobId } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.errorCode, 'GH-20004', 'the seeded admin role does not hold it');

    const permitted = await t.userToken({ sub: aliceId, tenantId: 'acme', permissions: ['fe.*', IMP] });
    const ok = await t.call('POST', IMPERSONATE, { token: permitted, body: { userId: bobId } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(claims(ok.body.accessToken).act, { sub: aliceId, type: 'user' });
    const rec = (await t.call('GET', IMPERSONATE, { token: vendor, headers: H('acme') })).body.find(
      (a: any) => a.id === ok.body.impersonationId,
    );
    assert.deepEqual(rec.actor, { type: 'user', id: aliceId });

    const narrow = await t.userToken({ sub: aliceId, tenantId: 'acme', permissions: [IMP, 'fe.secure.read.users'] });
    const escalate = await t.call('POST', IMPERSONATE, { token: narrow, body: { userId: bobId } });
    assert.equal(escalate.status, 403);
    assert.equal(escalate.body.errorCode, 'GH-64008');
    assert.ok(escalate.body.context.permissions.includes('fe.secure.read.roles'));

    for (const body of [{ userId: aliceId }, { userId: bobId, tenantId: 'globex' }]) {
      const r = await t.call('POST', IMPERSONATE, { token: permitted, body });
      assert.equal(r.status, 403);
      assert.equal(r.body.errorCode, 'GH-64008');
    }
    assert.equal((await t.call('POST', IMPERSONATE, { token: permitted, body: { userId: ginaId } })).status, 404);
  });

  test('machine tokens and impersonation tokens cannot impersonate', async () => {
    const svc = await service('acme', [IMP, 'fe.secure.read.users']);
    const r = await t.call('POST', IMPERSONATE, { token: svc.token, body: { userId: bobId } });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-64010');
    const acting = await t.ctx.keys.sign(
      {
        type: 'userToken',
        sub: aliceId,
        tenantId: 'acme',
        tenantIds: ['acme'],
        roles: [],
        permissions: ['fe.*', IMP],
        act: { sub: VENDOR.clientId, type: 'vendor' },
        aud: t.ctx.environment.id,
      },
      300,
    );
    const chained = await t.call('POST', IMPERSONATE, { token: acting, body: { userId: bobId } });
    assert.equal(chained.status, 403);
    assert.equal(chained.body.errorCode, 'GH-64008');
  });
});
