import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user as createUser } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const U = '/identity/resources/users';
let roleIds: Record<string, string> = {};

const rolesIn = async (userId: string, tenantId: string) => {
  const r = await t.call('GET', `${U}/v1/${userId}`, { token: vendor, headers: { 'gatehouse-tenant-id': tenantId } });
  return r.status === 200 ? r.body.roles.map((x: any) => x.key).sort() : r.status;
};

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['bk-a', 'bk-b', 'bk-c', 'bk-src', 'bk-dst']) {
    await account(t, { id });
  }
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  roleIds = Object.fromEntries(roles.body.map((r: any) => [r.key, r.id]));
});
after(async () => t?.close());

describe('bulk invitations', () => {
  let task: any;
  test('invites each user; refused ones are listed by index; the status is kept', async () => {
    await createUser(t, 'bk-a', { email: 'first@bk.test', password: null });
    await createUser(t, 'bk-a', { email: 'member@bk.test', password: null });
    const r = await t.call('POST', `${U}/bulk/v1/invite`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'bk-a' },
      body: {
        users: [
          { email: 'New1@bk.test', name: 'New One' },
          { email: 'member@bk.test' },
          { email: 'new2@bk.test', skipInviteEmail: true, roleIds: [roleIds.admin] },
          { email: 'new3@bk.test', metadata: 'not json' },
        ],
      },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    task = r.body;
    assert.equal(task.status, 'completed');
    assert.deepEqual([task.total, task.succeeded, task.failed], [4, 2, 2]);
    assert.deepEqual(
      task.users.map((u: any) => [u.index, u.email]),
      [
        [0, 'new1@bk.test'],
        [2, 'new2@bk.test'],
      ],
    );
    assert.deepEqual(
      task.errors.map((e: any) => [e.index, e.email, e.errorCode]),
      [
        [1, 'member@bk.test', 'GH-42006'],
        [3, 'new3@bk.test', 'GH-10001'],
      ],
    );
    assert.deepEqual(await rolesIn(task.users[1].userId, 'bk-a'), ['admin']);
    const list = await t.call('GET', `${U}/v2?_email=new1@bk.test`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'bk-a' },
    });
    assert.equal(list.body.items.length, 1);
    const status = await t.call('GET', `${U}/bulk/v1/status/${task.id}`, { token: vendor });
    assert.equal(status.status, 200);
    assert.deepEqual(status.body, task);
  });

  test("status: another account's user token and unknown ids get 404; bad bodies 400 and change nothing", async () => {
    const other = await t.userToken({ tenantId: 'bk-b', permissions: ['*'] });
    assert.equal((await t.call('GET', `${U}/bulk/v1/status/${task.id}`, { token: other })).status, 404);
    const own = await t.userToken({ tenantId: 'bk-a', permissions: ['*'] });
    assert.equal((await t.call('GET', `${U}/bulk/v1/status/${task.id}`, { token: own })).status, 200);
    const unknown = await t.call('GET', `${U}/bulk/v1/status/00000000-0000-4000-8000-000000000000`, { token: vendor });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-42010');
    assert.equal((await t.call('GET', `${U}/bulk/v1/status/nope`, { token: vendor })).status, 404);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ email: `x${i}@bk.test` }));
    for (const body of [{}, { users: [] }, { users: tooMany }, { users: [{ email: 'not-an-email' }] }]) {
      const r = await t.call('POST', `${U}/bulk/v1/invite`, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'bk-a' },
        body,
      });
      assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 200));
    }
    assert.equal(
      (await t.call('POST', `${U}/bulk/v1/invite`, { token: vendor, body: { users: [{ email: 'y@bk.test' }] } }))
        .status,
      400,
      'tenant header required',
    );
    assert.equal((await t.call('GET', `${U}/v1/email?email=x0@bk.test`, { token: vendor })).status, 404);
  });
});

describe('bulk roles across accounts', () => {
  test('adds and removes roles in every account of the user; accounts that cannot take it are listed', async () => {
    const u = await createUser(t, 'bk-b', { email: 'multi@bk.test', password: null });
    assert.equal(
      (await t.call('POST', `${U}/v1/${u.id}/tenant`, { token: vendor, body: { tenantId: 'bk-c' } })).status,
      201,
    );
    const path = `/identity/resources/vendor-only/users/v1/${u.id}/roles/bulk`;
    const r = await t.call('PATCH', path, {
      token: vendor,
      body: { addRoleIds: [roleIds.admin], removeRoleIds: [roleIds['read-only']] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.affectedTenants, 2);
    assert.deepEqual(r.body.rolesAdded, [roleIds.admin]);
    assert.deepEqual(await rolesIn(u.id, 'bk-b'), ['admin']);
    assert.deepEqual(await rolesIn(u.id, 'bk-c'), ['admin']);

    const partial = await t.call('PATCH', path, {
      token: vendor,
      body: { addRoleIds: [roleIds['read-only']], tenantIds: ['bk-c', 'bk-a'] },
    });
    assert.equal(partial.body.affectedTenants, 1);
    assert.deepEqual(
      partial.body.errors.map((e: any) => e.tenantId),
      ['bk-a'],
    );
    assert.deepEqual(await rolesIn(u.id, 'bk-c'), ['admin', 'read-only']);
    assert.deepEqual(await rolesIn(u.id, 'bk-b'), ['admin']);
    const status = await t.call(
      'GET',
      `/identity/resources/vendor-only/users/v1/bulk-roles/status/${partial.body.taskId}`,
      { token: vendor },
    );
    assert.equal(status.status, 200);
    assert.deepEqual(
      [status.body.status, status.body.totalTenants, status.body.processedTenants, status.body.userId],
      ['completed', 2, 2, u.id],
    );
    assert.deepEqual(status.body.addedRoleIds, [roleIds['read-only']]);

    const unknown = await t.call('PATCH', path, {
      token: vendor,
      body: {
        addRoleIds: [roleIds.admin, '00000000-0000-4000-8000-000000000000'],
        removeRoleIds: [roleIds['read-only']],
      },
    });
    assert.equal(unknown.status, 400);
    assert.deepEqual(await rolesIn(u.id, 'bk-c'), ['admin', 'read-only'], 'nothing changed');
    for (const body of [
      {},
      { addRoleIds: [] },
      { addRoleIds: [roleIds.admin], removeRoleIds: [roleIds.admin] },
      { addRoleIds: 'x' },
    ]) {
      assert.equal((await t.call('PATCH', path, { token: vendor, body })).status, 400, JSON.stringify(body));
    }
    assert.equal(
      (
        await t.call(
          'PATCH',
          `/identity/resources/vendor-only/users/v1/00000000-0000-4000-8000-000000000000/roles/bulk`,
          { token: vendor, body: { addRoleIds: [roleIds.admin] } },
        )
      ).status,
      404,
    );
    const user = await t.userToken({ tenantId: 'bk-b', sub: u.id, permissions: ['*'] });
    assert.equal((await t.call('PATCH', path, { token: user, body: { addRoleIds: [roleIds.admin] } })).status, 403);
    assert.equal(
      (
        await t.call(
          'GET',
          '/identity/resources/vendor-only/users/v1/bulk-roles/status/00000000-0000-4000-8000-000000000000',
          { token: vendor },
        )
      ).status,
      404,
    );
  });
});

describe('moving the users of an account', () => {
  test('every member moves to the target (environment roles kept, members of both unchanged); the source is empty', async () => {
    const only = await createUser(t, 'bk-src', { email: 'only@bk.test', password: null });
    const both = await createUser(t, 'bk-src', { email: 'both@bk.test', password: null });
    await createUser(t, 'bk-dst', { email: 'dst@bk.test', password: null });
    assert.equal(
      (await t.call('POST', `${U}/v1/${both.id}/tenant`, { token: vendor, body: { tenantId: 'bk-dst' } })).status,
      201,
    );
    assert.deepEqual(await rolesIn(only.id, 'bk-src'), ['admin'], 'first user of bk-src');
    const r = await t.call('PUT', `${U}/v1/tenants/migrate`, {
      token: vendor,
      body: { srcTenantId: 'bk-src', targetTenantId: 'bk-dst' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { srcTenantId: 'bk-src', targetTenantId: 'bk-dst', movedUsers: 2, alreadyMembers: 1 });
    assert.deepEqual(await rolesIn(only.id, 'bk-dst'), ['admin']);
    assert.deepEqual(await rolesIn(both.id, 'bk-dst'), ['read-only']);
    assert.equal(await rolesIn(only.id, 'bk-src'), 404);
    const moved = await t.call('GET', `/identity/resources/vendor-only/users/v1/${only.id}`, { token: vendor });
    assert.deepEqual(moved.body.tenantIds, ['bk-dst']);
    assert.equal(moved.body.tenantId, 'bk-dst');
    const left = await t.call('GET', `${U}/v2`, { token: vendor, headers: { 'gatehouse-tenant-id': 'bk-src' } });
    assert.equal(left.body.items.length, 0);
  });

  test('bad input: same account or missing field 400, unknown account 404, user token 403', async () => {
    const m = `${U}/v1/tenants/migrate`;
    assert.equal(
      (await t.call('PUT', m, { token: vendor, body: { srcTenantId: 'bk-a', targetTenantId: 'bk-a' } })).status,
      400,
    );
    assert.equal((await t.call('PUT', m, { token: vendor, body: { srcTenantId: 'bk-a' } })).status, 400);
    assert.equal(
      (await t.call('PUT', m, { token: vendor, body: { srcTenantId: 'bk-a', targetTenantId: 'ghost' } })).status,
      404,
    );
    assert.equal(
      (
        await t.call('PUT', m, {
          token: await t.userToken({ tenantId: 'bk-a', permissions: ['*'] }),
          body: { srcTenantId: 'bk-a', targetTenantId: 'bk-b' },
        })
      ).status,
      403,
    );
    const stay = await t.call('GET', `${U}/v2`, { token: vendor, headers: { 'gatehouse-tenant-id': 'bk-a' } });
    assert.ok(stay.body.items.length >= 3, 'bk-a kept its users');
  });
});
