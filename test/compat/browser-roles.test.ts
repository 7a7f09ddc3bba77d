import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rejectsWith, startBrowserSdk } from '../helpers/sdk.ts';

// Role writes of the browser SDK's roles API (v1 routes) by account administrators: their own account's roles only.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
const perm: Record<string, string> = {};
const R = '/identity/resources/roles/v1';
const inAccount = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
let foreignRoleId: string;
let readOnlyId: string;
let editorRoleId: string;

before(async () => {
  s = await startBrowserSdk();
  await s.account('rw-acme', 'Acme');
  await s.account('rw-other', 'Other');
  await s.user('rw-acme', 'admin@rw.test');
  const roles = await s.t.call('GET', R, { token: s.vendor });
  readOnlyId = roles.body.find((r: { key: string }) => r.key === 'read-only').id;
  const permissions = await s.t.call('GET', '/identity/resources/permissions/v1', { token: s.vendor });
  for (const p of permissions.body) perm[p.key] = p.id;
  // An account role of a junior editor: writes roles, reads users, at level 5.
  const permissionIds = ['fe.secure.read.roles', 'fe.secure.write.roles', 'fe.secure.read.users'].map((k) => perm[k]);
  const editor = await s.t.call('POST', R, {
    token: s.vendor,
    headers: inAccount('rw-acme'),
    body: [{ key: 'editor', name: 'Editor', level: 5, permissions: permissionIds }],
  });
  assert.equal(editor.status, 201, JSON.stringify(editor.body));
  editorRoleId = editor.body[0].id;
  await s.user('rw-acme', 'editor@rw.test', { roleIds: [editorRoleId] });
  const foreign = await s.t.call('POST', R, {
    token: s.vendor,
    headers: inAccount('rw-other'),
    body: [{ key: 'theirs', name: 'Theirs', level: 5 }],
  });
  foreignRoleId = foreign.body[0].id;
  await s.signIn('admin@rw.test');
});
after(async () => s?.t.close());

describe('@frontegg/rest-api roles writes by an account administrator', () => {
  test('addRole creates one role of the account (IRole), with the permission ids of `permissions`', async () => {
    const role = await s.sdk.api.roles.addRole({
      key: 'support',
      name: 'Support',
      description: 'helps',
      isDefault: false,
      level: 2,
      permissions: [perm['fe.secure.read.users']],
    });
    assert.ok(!Array.isArray(role), JSON.stringify(role));
    assert.equal(role.key, 'support');
    assert.equal(role.tenantId, 'rw-acme');
    assert.deepEqual(role.permissions, [perm['fe.secure.read.users']]);
    const listed = (await s.sdk.api.roles.getRoles()).find((r) => r.id === role.id);
    assert.equal(listed?.name, 'Support');
    // Not an environment role: another account does not see it.
    const other = await s.t.call('GET', R, { token: s.vendor, headers: inAccount('rw-other') });
    assert.ok(!other.body.some((r: { id: string }) => r.id === role.id));
  });

  test('updateRole, attachPermissionsToRole, attachPermissionToRoles, deleteRole on an account role', async () => {
    const base = { description: '', isDefault: false, permissions: [] };
    const role = await s.sdk.api.roles.addRole({ ...base, key: 'temp', name: 'Temp', level: 3 });
    const renamed = await s.sdk.api.roles.updateRole({ roleId: role.id, name: 'Temporary', level: 4 });
    assert.equal(renamed.name, 'Temporary');
    assert.equal(renamed.level, 4);
    const permissionIds = [perm['fe.secure.read.roles']];
    const withPerms = await s.sdk.api.roles.attachPermissionsToRole({ roleId: role.id, permissionIds });
    assert.deepEqual(withPerms.permissions, [perm['fe.secure.read.roles']]);
    // Which of the account's roles hold a permission; the environment's and other accounts' roles keep theirs.
    const read = perm['fe.secure.read.users'];
    const p = await s.sdk.api.roles.attachPermissionToRoles({ permissionId: read, roleIds: [role.id, editorRoleId] });
    assert.equal(p.id, read);
    const roles = await s.sdk.api.roles.getRoles();
    assert.ok(roles.find((r) => r.id === readOnlyId)?.permissions.includes(perm['fe.secure.read.users']));
    assert.ok(!roles.find((r) => r.key === 'support')?.permissions.includes(read), 'support lost it');
    await s.sdk.api.roles.deleteRole({ roleId: role.id });
    assert.ok(!(await s.sdk.api.roles.getRoles()).some((r) => r.id === role.id));
  });

  test("the environment's roles are out of reach (403), another account's are unknown (404)", async () => {
    await rejectsWith(s.sdk.api.roles.updateRole({ roleId: readOnlyId, name: 'Mine now' }), 403);
    await rejectsWith(s.sdk.api.roles.attachPermissionsToRole({ roleId: readOnlyId, permissionIds: [] }), 403);
    await rejectsWith(s.sdk.api.roles.deleteRole({ roleId: readOnlyId }), 403);
    const permissionId = perm['fe.secure.read.users'];
    await rejectsWith(s.sdk.api.roles.attachPermissionToRoles({ permissionId, roleIds: [readOnlyId] }), 403);
    await rejectsWith(s.sdk.api.roles.updateRole({ roleId: foreignRoleId, name: 'x' }), 404);
    await rejectsWith(s.sdk.api.roles.deleteRole({ roleId: foreignRoleId }), 404);
    const env = await s.t.call('GET', '/identity/resources/roles/v1', { token: s.vendor });
    assert.equal(env.body.find((r: { id: string }) => r.id === readOnlyId).name, 'ReadOnly');
  });
});

describe('@frontegg/rest-api roles writes by a junior editor (the grant rule of addRoleV2)', () => {
  before(async () => s.signIn('editor@rw.test'));

  test('within their permissions and level: allowed', async () => {
    const role = await s.sdk.api.roles.addRole({
      key: 'viewer',
      name: 'Viewer',
      description: '',
      isDefault: false,
      level: 7,
      permissions: [perm['fe.secure.read.users']],
    });
    assert.equal(role.tenantId, 'rw-acme');
    const edited = await s.sdk.api.roles.updateRole({ roleId: role.id, description: 'reads users' });
    assert.equal(edited.description, 'reads users');
  });

  test('a permission they do not hold, a level above theirs, a role beyond them: 403, nothing changes', async () => {
    const base = { description: '', isDefault: false };
    const writeUsers = [perm['fe.secure.write.users']];
    const beyond = { ...base, key: 'x1', name: 'X', level: 7, permissions: writeUsers };
    await rejectsWith(s.sdk.api.roles.addRole(beyond), 403);
    await rejectsWith(s.sdk.api.roles.addRole({ ...base, key: 'x2', name: 'X', level: 1, permissions: [] }), 403);
    const support = (await s.sdk.api.roles.getRoles()).find((r) => r.key === 'support')!;
    await rejectsWith(s.sdk.api.roles.updateRole({ roleId: support.id, name: 'Mine' }), 403);
    await rejectsWith(s.sdk.api.roles.deleteRole({ roleId: support.id }), 403);
    const viewer = (await s.sdk.api.roles.getRoles()).find((r) => r.key === 'viewer')!;
    await rejectsWith(s.sdk.api.roles.updateRole({ roleId: viewer.id, level: 0 }), 403);
    const deleteUsers = [perm['fe.secure.delete.users']];
    await rejectsWith(s.sdk.api.roles.attachPermissionsToRole({ roleId: viewer.id, permissionIds: deleteUsers }), 403);
    const keys = (await s.sdk.api.roles.getRoles()).map((r) => r.key);
    assert.ok(!keys.includes('x1') && !keys.includes('x2'), keys.join());
    assert.equal((await s.sdk.api.roles.getRoles()).find((r) => r.key === 'support')?.name, 'Support');
  });
});
