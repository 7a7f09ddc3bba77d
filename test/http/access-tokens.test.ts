import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const TENANT = '/identity/resources/tenants/access-tokens/v1';
const USER = '/identity/resources/users/access-tokens/v1';
const LOOKUP_USER = '/identity/resources/vendor-only/users/access-tokens/v1';
const LOOKUP_TENANT = '/identity/resources/vendor-only/tenants/access-tokens/v1';
const USERS = '/identity/resources/users/v2';
const NOBODY = '00000000-0000-4000-8000-000000000000';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const H = (tenantId: string, extra: Record<string, string> = {}) => ({ 'gatehouse-tenant-id': tenantId, ...extra });
let roleIds: Record<string, string> = {};
let permIds: Record<string, string> = {};
let alice = '';
let aliceId = '';
let bobId = '';

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['acme', 'globex']) await account(t, { id: tenantId });
  aliceId = (await user(t, 'acme', { email: 'alice@acme.test' })).id;
  bobId = (await user(t, 'acme', { email: 'bob@acme.test' })).id;
  alice = (await signedIn(t, { email: 'alice@acme.test' })).accessToken;
  roleIds = Object.fromEntries(
    (await t.call('GET', '/identity/resources/roles/v1', { token: vendor })).body.map((x: any) => [x.key, x.id]),
  );
  permIds = Object.fromEntries(
    (await t.call('GET', '/identity/resources/permissions/v1', { token: vendor })).body.map((x: any) => [x.key, x.id]),
  );
});
after(async () => t?.close());

describe('account access tokens', () => {
  test('create with roles and expiry; the token calls routes; verifiers look it up; delete ends it', async () => {
    const r = await t.call('POST', TENANT, {
      token: vendor,
      headers: H('acme'),
      body: { description: 'reporting', expiresInMinutes: 1440, roleIds: [roleIds['read-only']] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { id, secret } = r.body;
    assert.ok(secret);
    assert.deepEqual(r.body.roleIds, [roleIds['read-only']]);
    assert.ok(Math.abs(Date.parse(r.body.expires) - (Date.now() + 1440 * 60_000)) < 60_000);
    const c = claims(secret);
    assert.equal(c.type, 'tenantAccessToken');
    assert.equal(c.sub, id);
    assert.equal(c.tenantId, 'acme');
    assert.ok(Math.abs(c.exp - Date.parse(r.body.expires) / 1000) <= 2, 'the JWT ends when the token does');

    const list = await t.call('GET', TENANT, { token: vendor, headers: H('acme') });
    assert.equal(list.status, 200);
    assert.equal(list.body.accessTokens.length, 1);
    assert.equal(list.body.accessTokens[0].id, id);
    assert.equal(list.body.accessTokens[0].secret, undefined);

    const users = await t.call('GET', USERS, { token: secret });
    assert.equal(users.status, 200, JSON.stringify(users.body));
    assert.equal(users.body.items.length, 2);
    assert.equal(
      (await t.call('POST', '/identity/resources/users/v1', { token: secret, body: { email: 'x@acme.test' } })).status,
      403,
    );

    const active = await t.call('GET', `${LOOKUP_USER}/active`, { token: vendor, headers: H('acme') });
    assert.equal(active.status, 200);
    assert.ok(active.body.includes(id));
    const data = await t.call('GET', `${LOOKUP_TENANT}/${id}`, { token: vendor, headers: H('acme') });
    assert.equal(data.status, 200, JSON.stringify(data.body));
    assert.equal(data.body.id, id);
    assert.equal(data.body.tenantId, 'acme');
    assert.deepEqual(data.body.roles, ['read-only']);
    assert.ok(data.body.permissions.includes('fe.secure.read.users'));
    assert.equal(data.body.expires, r.body.expires);
    assert.equal(
      (await t.call('GET', `${LOOKUP_TENANT}/${id}`, { token: vendor, headers: H('globex') })).status,
      404,
      'another account',
    );
    assert.equal(
      (await t.call('GET', `${LOOKUP_USER}/${id}`, { token: vendor, headers: H('acme') })).status,
      404,
      'not a user token',
    );

    assert.equal((await t.call('DELETE', `${TENANT}/${id}`, { token: vendor, headers: H('acme') })).status, 200);
    const gone = await t.call('GET', USERS, { token: secret });
    assert.equal(gone.status, 401);
    assert.equal(gone.body.errorCode, 'GH-64011');
    assert.equal((await t.call('GET', `${LOOKUP_TENANT}/${id}`, { token: vendor, headers: H('acme') })).status, 404);
    assert.ok(!(await t.call('GET', `${LOOKUP_USER}/active`, { token: vendor, headers: H('acme') })).body.includes(id));
    assert.equal((await t.call('DELETE', `${TENANT}/${id}`, { token: vendor, headers: H('acme') })).status, 404);
  });

  test('roles are read when the token is used: a change to the role takes effect at once', async () => {
    const role = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      headers: H('acme'),
      body: [{ key: 'reporter', name: 'Reporter', level: 5 }],
    });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    const reporter = role.body[0].id;
    const set = (ids: string[]) =>
      t.call('PUT', `/identity/resources/roles/v1/${reporter}/permissions`, {
        token: vendor,
        headers: H('acme'),
        body: { permissionIds: ids },
      });
    assert.equal((await set([permIds['fe.secure.read.users']])).status, 200);
    const r = await t.call('POST', TENANT, { token: vendor, headers: H('acme'), body: { roleIds: [reporter] } });
    assert.equal(r.body.expires, null);
    assert.ok(claims(r.body.secret).exp - claims(r.body.secret).iat > 9 * 365 * 86400, 'no expiry: ten years');
    assert.equal((await t.call('GET', USERS, { token: r.body.secret })).status, 200);
    assert.equal((await set([])).status, 200);
    const users = await t.call('GET', USERS, { token: r.body.secret });
    assert.equal(users.status, 403);
    assert.equal(users.body.errorCode, 'GH-20004');
  });

  test('an expired access token is refused by the guard and by the lookups', async () => {
    const r = await t.call('POST', TENANT, {
      token: vendor,
      headers: H('acme'),
      body: { expiresInMinutes: 5, roleIds: [roleIds['read-only']] },
    });
    await t.db.query("UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [r.body.id]);
    const call = await t.call('GET', USERS, { token: r.body.secret });
    assert.equal(call.status, 401);
    assert.equal(call.body.errorCode, 'GH-64005');
    assert.equal(
      (await t.call('GET', `${LOOKUP_TENANT}/${r.body.id}`, { token: vendor, headers: H('acme') })).status,
      404,
    );
    assert.ok(
      !(await t.call('GET', `${LOOKUP_USER}/active`, { token: vendor, headers: H('acme') })).body.includes(r.body.id),
    );
  });

  test("bad input: unknown roles 400, another account's token 404, missing header 400, user tokens need the permission", async () => {
    const bad = await t.call('POST', TENANT, { token: vendor, headers: H('acme'), body: { roleIds: [NOBODY] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-40007');
    assert.equal(
      (await t.call('POST', TENANT, { token: vendor, headers: H('acme'), body: { expiresInMinutes: -1 } })).status,
      400,
    );
    assert.equal((await t.call('GET', TENANT, { token: vendor })).status, 400);
    const mine = await t.call('POST', TENANT, { token: alice, body: { description: 'alice made it' } });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.createdByUserId, aliceId);
    assert.equal(
      (await t.call('DELETE', `${TENANT}/${mine.body.id}`, { token: vendor, headers: H('globex') })).status,
      404,
    );
    const reader = await t.userToken({ sub: bobId, tenantId: 'acme', permissions: ['fe.secure.read.users'] });
    assert.equal((await t.call('GET', TENANT, { token: reader })).status, 403);
    assert.equal(
      (await t.call('GET', `${LOOKUP_USER}/active`, { token: alice })).status,
      403,
      'lookups are vendor-only',
    );
    assert.equal((await t.call('GET', `${LOOKUP_USER}/active`, { token: vendor })).status, 400);
  });
});

describe('user (personal) access tokens', () => {
  test('a user creates one scoped to a subset of their permissions; lookups answer the user and the subset', async () => {
    const r = await t.call('POST', USER, {
      token: alice,
      body: { description: 'laptop', expiresInMinutes: 60, permissionIds: [permIds['fe.secure.read.users']] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const c = claims(r.body.secret);
    assert.equal(c.type, 'userAccessToken');
    assert.equal(c.userId, aliceId);
    assert.deepEqual(r.body.permissionIds, [permIds['fe.secure.read.users']]);
    const data = await t.call('GET', `${LOOKUP_USER}/${r.body.id}`, { token: vendor, headers: H('acme') });
    assert.equal(data.status, 200, JSON.stringify(data.body));
    assert.equal(data.body.userId, aliceId);
    assert.deepEqual(data.body.permissions, ['fe.secure.read.users']);
    assert.deepEqual(data.body.roles, ['admin']);
    assert.equal((await t.call('GET', USERS, { token: r.body.secret })).status, 200);
    assert.equal(
      (await t.call('POST', '/identity/resources/users/v1', { token: r.body.secret, body: { email: 'y@acme.test' } }))
        .status,
      403,
      'narrowed',
    );

    const list = await t.call('GET', USER, { token: alice });
    assert.deepEqual(
      list.body.accessTokens.map((x: any) => x.id),
      [r.body.id],
    );
    assert.equal(
      (await t.call('GET', USER, { token: vendor, headers: H('acme', { 'gatehouse-user-id': bobId }) })).body
        .accessTokens.length,
      0,
    );
    assert.equal(
      (
        await t.call('DELETE', `${USER}/${r.body.id}`, {
          token: vendor,
          headers: H('acme', { 'gatehouse-user-id': bobId }),
        })
      ).status,
      404,
      "not bob's",
    );
    assert.equal((await t.call('DELETE', `${USER}/${r.body.id}`, { token: alice })).status, 200);
    assert.equal((await t.call('GET', USERS, { token: r.body.secret })).status, 401);
  });

  test('a personal token never exceeds what the user holds now', async () => {
    const bob = await t.call('POST', USER, {
      token: vendor,
      headers: H('acme', { 'gatehouse-user-id': bobId }),
      body: {},
    });
    assert.equal(bob.status, 201);
    const data = await t.call('GET', `${LOOKUP_USER}/${bob.body.id}`, { token: vendor, headers: H('acme') });
    assert.deepEqual(data.body.roles, ['read-only']);
    assert.ok(!data.body.permissions.includes('fe.secure.write.users'));
    const escalate = await t.call('POST', USER, {
      token: vendor,
      headers: H('acme', { 'gatehouse-user-id': bobId }),
      body: { permissionIds: [permIds['fe.secure.write.users']] },
    });
    assert.equal(escalate.status, 403);
    assert.equal(escalate.body.errorCode, 'GH-64006');
    // Bob loses his role: the token loses its permissions with it.
    assert.equal(
      (
        await t.call('DELETE', `/identity/resources/users/v1/${bobId}/roles`, {
          token: vendor,
          headers: H('acme'),
          body: { roleIds: [roleIds['read-only']] },
        })
      ).status,
      200,
    );
    const after = await t.call('GET', `${LOOKUP_USER}/${bob.body.id}`, { token: vendor, headers: H('acme') });
    assert.deepEqual(after.body.permissions, []);
  });

  test('removing the user ends the token', async () => {
    const carol = (await user(t, 'acme', { email: 'carol@acme.test' })).id;
    const r = await t.call('POST', USER, {
      token: vendor,
      headers: H('acme', { 'gatehouse-user-id': carol }),
      body: {},
    });
    assert.equal((await t.call('DELETE', `/identity/resources/users/v1/${carol}`, { token: vendor })).status, 200);
    assert.equal(
      (await t.call('GET', `${LOOKUP_USER}/${r.body.id}`, { token: vendor, headers: H('acme') })).status,
      404,
    );
    assert.equal((await t.call('GET', USERS, { token: r.body.secret })).status, 401);
  });

  test('disabled machine tokens: create and use are 403', async () => {
    const r = await t.call('POST', USER, { token: alice, body: {} });
    await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { apiTokensEnabled: false } });
    try {
      const use = await t.call('GET', USERS, { token: r.body.secret });
      assert.equal(use.status, 403);
      assert.equal(use.body.errorCode, 'GH-64001');
      assert.equal((await t.call('POST', USER, { token: alice, body: {} })).status, 403);
      assert.equal((await t.call('POST', TENANT, { token: vendor, headers: H('acme'), body: {} })).status, 403);
    } finally {
      await t.call('POST', '/identity/resources/configurations/v1', {
        token: vendor,
        body: { apiTokensEnabled: true },
      });
    }
    assert.equal((await t.call('GET', USERS, { token: r.body.secret })).status, 200);
  });
});
