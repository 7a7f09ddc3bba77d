import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rejectsWith, startBrowserSdk } from '../helpers/sdk.ts';

// Lookups about several users at once through the browser SDK, signed in as an account's administrator.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
let env: string;
const id: Record<string, string> = {};
const role: Record<string, string> = {};
const group: Record<string, string> = {};

async function vendorCall(method: string, url: string, body: unknown, tenantId?: string, status = 201) {
  const headers = tenantId ? { 'gatehouse-tenant-id': tenantId } : undefined;
  const r = await s.t.call(method, url, { token: s.vendor, body, headers });
  assert.equal(r.status, status, `${method} ${url}: ${JSON.stringify(r.body)}`);
  return r.body;
}

before(async () => {
  s = await startBrowserSdk();
  env = s.t.ctx.environment.id;
  await s.account('lk-acme', 'Acme');
  await s.account('lk-other', 'Other');
  id.admin = await s.user('lk-acme', 'admin@lk.test');
  const ops = [{ key: 'lk-ops', name: 'Ops', level: 3 }];
  [{ id: role.ops }] = await vendorCall('POST', '/identity/resources/roles/v1', ops, 'lk-acme');
  id.ann = await s.user('lk-acme', 'ann@lk.test', { roleIds: [role.ops] });
  id.bob = await s.user('lk-acme', 'bob@lk.test');
  // bob keeps no role at all (he got the default ReadOnly), so he cannot read users.
  const readOnly = 'c784abeb-f295-45fb-84ed-19a1652cfb43';
  await vendorCall('DELETE', `/identity/resources/users/v1/${id.bob}/roles`, { roleIds: [readOnly] }, 'lk-acme', 200);
  id.stranger = await s.user('lk-other', 'stranger@lk.test');
  group.blue = (await vendorCall('POST', '/identity/resources/groups/v1', { name: 'Blue' }, 'lk-acme')).id;
  group.amber = (await vendorCall('POST', '/identity/resources/groups/v1', { name: 'amber' }, 'lk-acme')).id;
  const G = '/identity/resources/groups/v1';
  await vendorCall('POST', `${G}/${group.blue}/users`, { userIds: [id.ann, id.bob] }, 'lk-acme');
  await vendorCall('POST', `${G}/${group.amber}/users`, { userIds: [id.ann] }, 'lk-acme');
  for (const [userId, username] of [
    [id.ann, 'ann.k'],
    [id.stranger, 'strange'],
  ]) {
    const r = await s.t.call('POST', '/identity/resources/usernames/v1', {
      token: s.vendor,
      body: { username },
      headers: { 'gatehouse-user-id': userId },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  await s.signIn('admin@lk.test');
});
after(async () => s?.t.close());

describe('@frontegg/rest-api users lookups', () => {
  test("getUsersRoles: GetUserRolesResponse[] for the members of the admin's account", async () => {
    const answer = await s.sdk.api.users.getUsersRoles({ ids: [id.bob, id.stranger, id.ann] });
    assert.ok(Array.isArray(answer), JSON.stringify(answer));
    assert.deepEqual(answer, [
      { vendorId: env, tenantId: 'lk-acme', userId: id.bob, roleIds: [] },
      { vendorId: env, tenantId: 'lk-acme', userId: id.ann, roleIds: [role.ops] },
    ]);
    const [admin] = await s.sdk.api.users.getUsersRoles({ ids: [id.admin] });
    const seeded = (await s.sdk.api.roles.getRoles()).find((r) => r.key === 'admin');
    assert.deepEqual(admin.roleIds, [seeded?.id], 'the first user of the account holds Admin');
  });

  test('getUsersGroups: GetUserGroupsResponse[], groups by name', async () => {
    const answer = await s.sdk.api.users.getUsersGroups({ ids: [id.ann, id.bob, id.stranger] });
    assert.deepEqual(answer, [
      { vendorId: env, tenantId: 'lk-acme', userId: id.ann, groupIds: [group.amber, group.blue] },
      { vendorId: env, tenantId: 'lk-acme', userId: id.bob, groupIds: [group.blue] },
    ]);
  });

  test("getUsersUsernames: a page of {vendorId, userId, username} for the account's members", async () => {
    const page = await s.sdk.api.users.getUsersUsernames({ userIds: [id.ann, id.bob, id.stranger] });
    assert.deepEqual(page.items, [{ vendorId: env, userId: id.ann, username: 'ann.k' }]);
    assert.deepEqual(page._metadata, { totalItems: 1, totalPages: 1 });
  });

  test('a member without fe.secure.read.users is refused the lookups (403)', async () => {
    await s.signIn('bob@lk.test');
    try {
      await rejectsWith(s.sdk.api.users.getUsersRoles({ ids: [id.ann] }), 403);
      await rejectsWith(s.sdk.api.users.getUsersGroups({ ids: [id.ann] }), 403);
    } finally {
      await s.signIn('admin@lk.test');
    }
  });
});

describe('@frontegg/rest-api teams lists', () => {
  test('loadAvailableRoles answers ITeamUserRole[]; loadUsers a PaginationResult {items, totalPages}', async () => {
    const roles = await s.sdk.api.teams.loadAvailableRoles();
    assert.ok(Array.isArray(roles), JSON.stringify(roles).slice(0, 200));
    assert.ok(roles.some((r) => r.id === role.ops && r.key === 'lk-ops'));
    const page = await s.sdk.api.teams.loadUsers({ pageOffset: 0, pageSize: 2 });
    assert.equal(page.totalPages, 2);
    assert.equal(page.items.length, 2);
  });
});

describe('@frontegg/rest-api teams.updateUser', () => {
  test("without roleIds the member's roles stay as they are", async () => {
    const updated = await s.sdk.api.teams.updateUser({ id: id.ann });
    assert.equal(updated.id, id.ann);
    const [ann] = await s.sdk.api.users.getUsersRoles({ ids: [id.ann] });
    assert.deepEqual(ann.roleIds, [role.ops]);
    await s.sdk.api.teams.updateUser({ id: id.ann, roleIds: [] });
    assert.deepEqual((await s.sdk.api.users.getUsersRoles({ ids: [id.ann] }))[0].roleIds, []);
  });
});
