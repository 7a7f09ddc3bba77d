import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

// A user may give (or take away) a role only when they hold every permission of it and its level is not above
// theirs (lower level numbers rank higher: the seeded admin is 0). Each attack below was possible before.

let t: TestApp;
let vendor: string;
const TENANT = 'sr-acme';
const U = '/identity/resources/users';
const G = '/identity/resources/groups';
const NOT_GRANTABLE = 'GH-20020';
const READ_USERS = 'cd9ae0f8-42e4-40f2-bdab-083a874f3720';
const WRITE_USERS = '375971fd-bf45-459a-a94d-38c7409d0b93';

const role: Record<string, string> = {};
const id: Record<string, string> = {};
let ada: string; // the account's first user: admin
let mallory: string; // holds only user-manager (read and write users)

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const hdr = { 'gatehouse-tenant-id': TENANT };
const as = (token: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.call(method, url, { token, body, headers });

async function envRole(key: string, level: number, permissionIds: string[]): Promise<string> {
  const r = await as(vendor, 'POST', '/identity/resources/roles/v1', [{ key, name: key, level }]);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const p = await as(vendor, 'PUT', `/identity/resources/roles/v1/${r.body[0].id}/permissions`, { permissionIds });
  assert.equal(p.status, 200, JSON.stringify(p.body));
  return r.body[0].id;
}

function refused(r: { status: number; body: any }, key = 'admin') {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, NOT_GRANTABLE);
  assert.match(r.body.errors[0], new RegExp(`\\b${key}\\b`));
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: TENANT, name: 'Acme' });
  const seeded = (await as(vendor, 'GET', '/identity/resources/roles/v1')).body as { id: string; key: string }[];
  role.admin = seeded.find((r) => r.key === 'admin')!.id;
  role.userManager = await envRole('user-manager', 3, [READ_USERS, WRITE_USERS]);
  role.viewer = await envRole('viewer', 4, [READ_USERS]);
  role.senior = await envRole('senior-viewer', 2, [READ_USERS]); // permissions mallory holds, level above his
  id.ada = (await user(t, TENANT, { email: 'ada@acme.test' })).id;
  id.mallory = (await user(t, TENANT, { email: 'mallory@acme.test', roleIds: [role.userManager] })).id;
  id.bob = (await user(t, TENANT, { email: 'bob@acme.test', roleIds: [role.viewer] })).id;
  ada = (await signedIn(t, { email: 'ada@acme.test' })).accessToken;
  mallory = (await signedIn(t, { email: 'mallory@acme.test' })).accessToken;
  assert.deepEqual(claims(ada).roles, ['admin']);
  assert.deepEqual(claims(mallory).roles, ['user-manager']);
});
after(async () => t?.close());

describe('assigning roles to users', () => {
  test('a user with only user read/write permissions cannot give himself the admin role', async () => {
    refused(await as(mallory, 'POST', `${U}/v1/${id.mallory}/roles`, { roleIds: [role.admin] }));
    assert.deepEqual(
      claims((await signedIn(t, { email: 'mallory@acme.test' })).accessToken).roles,
      ['user-manager'],
      'nothing was assigned',
    );
  });

  test('he may assign a role he holds the permissions of at a level not above his; not one above him', async () => {
    const ok = await as(mallory, 'POST', `${U}/v1/${id.bob}/roles`, { roleIds: [role.viewer, role.userManager] });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    refused(await as(mallory, 'POST', `${U}/v1/${id.bob}/roles`, { roleIds: [role.senior] }), 'senior-viewer');
    const mixed = await as(mallory, 'POST', `${U}/v1/${id.bob}/roles`, { roleIds: [role.viewer, role.admin] });
    refused(mixed);
    assert.deepEqual(mixed.body.context.roleKeys, ['admin'], 'only the roles beyond him are named');
  });

  test('other role routes: replace (team, sub-accounts), user creation, taking a higher role away', async () => {
    const TEAM = '/team/resources/members/v1';
    const SUB = `/identity/resources/sub-tenants/users/v1/${id.mallory}/roles`;
    const admin = { roleIds: [role.admin] };
    refused(await as(mallory, 'PUT', TEAM, { id: id.mallory, roleIds: [role.userManager, role.admin] }));
    refused(await as(mallory, 'PATCH', SUB, admin, hdr));
    refused(await as(mallory, 'POST', SUB, admin, hdr));
    refused(await as(mallory, 'POST', `${U}/v1`, { email: 'sock@acme.test', ...admin }));
    // Taking the admin role from the real admin is refused too (demoting a superior is the same escalation).
    refused(await as(mallory, 'DELETE', `${U}/v1/${id.ada}/roles`, admin));
    refused(await as(mallory, 'PUT', TEAM, { id: id.ada, roleIds: [] }));
    assert.deepEqual(claims((await signedIn(t, { email: 'ada@acme.test' })).accessToken).roles, ['admin']);
    // Replacing roles checks only what changes: the admin's own role stays, a role mallory may grant is added.
    const keep = await as(mallory, 'PUT', TEAM, { id: id.ada, roleIds: [role.admin, role.viewer] });
    assert.equal(keep.status, 200, JSON.stringify(keep.body));
    const created = await as(mallory, 'POST', `${U}/v1`, { email: 'viewer@acme.test', roleIds: [role.viewer] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  });

  test('the admin (and the environment) may still assign and take away the admin role', async () => {
    const r = await as(ada, 'POST', `${U}/v1/${id.bob}/roles`, { roleIds: [role.admin] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const back = await as(ada, 'DELETE', `${U}/v1/${id.bob}/roles`, { roleIds: [role.admin] });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const v = await as(vendor, 'POST', `${U}/v1/${id.bob}/roles`, { roleIds: [role.admin] }, hdr);
    assert.equal(v.status, 201);
    assert.equal((await as(vendor, 'DELETE', `${U}/v1/${id.bob}/roles`, { roleIds: [role.admin] }, hdr)).status, 200);
  });

  test('a machine token acting for the account is held to its own roles', async () => {
    const token = await t.userToken({ sub: id.mallory, tenantId: TENANT, roles: ['user-manager'], permissions: ['*'] });
    // Every permission, but the level of user-manager: the admin role ranks above it.
    refused(await as(token, 'POST', `${U}/v1/${id.mallory}/roles`, { roleIds: [role.admin] }));
    const none = await t.userToken({ sub: id.mallory, tenantId: TENANT, permissions: ['*'] });
    const r = await as(none, 'POST', `${U}/v1/${id.mallory}/roles`, { roleIds: [role.viewer] });
    refused(r, 'viewer');
    assert.match(r.body.errors[0], /you hold no role/);
  });
});

describe('groups carrying roles', () => {
  let admins: string;

  before(async () => {
    const g = await as(ada, 'POST', `${G}/v1`, { name: 'Admins' });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    admins = g.body.id;
    const r = await as(ada, 'POST', `${G}/v1/${admins}/roles`, { roleIds: [role.admin] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });

  test('creating a group and giving it the admin role is refused', async () => {
    const g = await as(mallory, 'POST', `${G}/v1`, { name: 'Mallory crew' });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    refused(await as(mallory, 'POST', `${G}/v1/${g.body.id}/roles`, { roleIds: [role.admin] }));
    assert.equal((await as(mallory, 'POST', `${G}/v1/${g.body.id}/roles`, { roleIds: [role.viewer] })).status, 201);
  });

  test('adding the admin role to an existing group is refused', async () => {
    const ops = await as(ada, 'POST', `${G}/v1`, { name: 'Ops' });
    refused(await as(mallory, 'POST', `${G}/v1/${ops.body.id}/roles`, { roleIds: [role.admin] }));
  });

  test('adding himself to a group with the admin role is refused; removing members or its roles too', async () => {
    refused(await as(mallory, 'POST', `${G}/v1/${admins}/users`, { userIds: [id.mallory] }));
    assert.deepEqual(claims((await signedIn(t, { email: 'mallory@acme.test' })).accessToken).roles, ['user-manager']);
    const added = await as(ada, 'POST', `${G}/v1/${admins}/users`, { userIds: [id.bob] });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    refused(await as(mallory, 'DELETE', `${G}/v1/${admins}/users`, { userIds: [id.bob] }));
    refused(await as(mallory, 'DELETE', `${G}/v1/${admins}/roles`, { roleIds: [role.admin] }));
    refused(await as(mallory, 'DELETE', `${G}/v1/${admins}`));
  });

  test('the admin may still manage the admin group', async () => {
    assert.equal((await as(ada, 'DELETE', `${G}/v1/${admins}/users`, { userIds: [id.bob] })).status, 200);
    assert.equal((await as(ada, 'DELETE', `${G}/v1/${admins}/roles`, { roleIds: [role.admin] })).status, 200);
    assert.equal((await as(ada, 'DELETE', `${G}/v1/${admins}`)).status, 200);
  });
});

describe('invitations and invite links', () => {
  test('an invitation with the admin role by a non-admin is refused; within his roles it is not', async () => {
    const invite = (email: string, roleId: string) => ({ email, roleIds: [roleId], skipInviteEmail: true });
    refused(await as(mallory, 'POST', `${U}/v2`, invite('friend@acme.test', role.admin)));
    const ok = await as(mallory, 'POST', `${U}/v2`, invite('friend@acme.test', role.viewer));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const bulk = await as(mallory, 'POST', `${U}/bulk/v1/invite`, { users: [invite('bulk@acme.test', role.admin)] });
    assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
    assert.equal(bulk.body.errors[0]?.errorCode, NOT_GRANTABLE);
    const byAdmin = await as(ada, 'POST', `${U}/v2`, invite('deputy@acme.test', role.admin));
    assert.equal(byAdmin.status, 201, JSON.stringify(byAdmin.body));
  });

  test('an invite link that gives the admin role is refused to a non-admin', async () => {
    const T = '/identity/resources/tenants/invites/v2/user';
    const link = (roleId: string) => ({ expiresInMinutes: 60, shouldSendEmail: false, roleIds: [roleId] });
    refused(await as(mallory, 'POST', T, link(role.admin)));
    const ok = await as(mallory, 'POST', T, link(role.viewer));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const byAdmin = await as(ada, 'POST', T, link(role.admin));
    assert.equal(byAdmin.status, 201, JSON.stringify(byAdmin.body));
  });
});

describe('configuration that assigns roles later', () => {
  test('SSO default roles and group mappings, SCIM group mappings, API tokens, roles v2', async () => {
    const manager = await t.userToken({
      sub: id.mallory,
      tenantId: TENANT,
      roles: ['user-manager'],
      permissions: [
        'fe.secure.read.users',
        'fe.secure.write.users',
        'fe.secure.write.samlConfiguration',
        'fe.secure.write.scim',
        'fe.secure.read.scim',
        'fe.secure.write.tenantApiTokens',
        'fe.secure.write.roles',
      ],
    });
    const sso = await as(vendor, 'POST', '/team/resources/sso/v1/configurations', { type: 'saml' }, hdr);
    assert.equal(sso.status, 201, JSON.stringify(sso.body));
    const C = `/team/resources/sso/v1/configurations/${sso.body.id}`;
    refused(await as(manager, 'PUT', `${C}/roles`, { roleIds: [role.admin] }));
    refused(await as(manager, 'POST', `${C}/groups`, { group: 'it', roleIds: [role.admin] }));
    refused(await as(manager, 'PATCH', C, { roleIds: [role.admin] }));
    const SSO = '/team/resources/sso/v1/configurations';
    refused(await as(manager, 'POST', SSO, { type: 'saml', roleIds: [role.admin] }));
    assert.equal((await as(manager, 'PUT', `${C}/roles`, { roleIds: [role.viewer] })).status, 201);

    const SCIM = '/directory/resources/v1/configurations/scim2';
    const conn = await as(vendor, 'POST', SCIM, { source: 'okta' }, hdr);
    assert.equal(conn.status, 201, JSON.stringify(conn.body));
    const mappings = (roleIds: string[]) => ({ mappings: [{ group: 'it', roleIds }] });
    const MAP = `${SCIM}/${conn.body.id}/group-mappings`;
    refused(await as(manager, 'PUT', MAP, mappings([role.admin])));
    assert.equal((await as(manager, 'PUT', MAP, mappings([role.viewer]))).status, 200);

    refused(await as(manager, 'POST', '/identity/resources/tenants/api-tokens/v1', { roleIds: [role.admin] }));

    // A role made by a user never ranks above its maker, whatever its base role.
    const copy = { key: 'copy', name: 'Copy', baseRoleId: role.admin };
    const made = await as(manager, 'POST', '/identity/resources/roles/v2', copy);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal(made.body.level, 3);
  });
});

describe('the first member of a sub-account', () => {
  test('a user who fills an empty sub-account gives its first-user roles: only when he could grant them', async () => {
    const sub = (tenantId: string) => ({ tenantId, name: tenantId, parentTenantId: TENANT });
    const kid = await as(vendor, 'POST', '/tenants/resources/sub-tenants/v1', sub('sr-kid'));
    assert.equal(kid.status, 201, JSON.stringify(kid.body));
    for (const who of [id.mallory, id.ada]) {
      const ACCESS = `/identity/resources/sub-tenants/users/v1/${who}/access`;
      const open = await as(vendor, 'PUT', ACCESS, { allowAccess: true }, hdr);
      assert.equal(open.status, 200, JSON.stringify(open.body));
    }
    const S = '/identity/resources/sub-tenants/users';
    const kidHdr = { 'gatehouse-tenant-id': 'sr-kid' };
    refused(await as(mallory, 'POST', `${S}/v1`, { email: 'puppet@acme.test' }, kidHdr));
    refused(await as(mallory, 'POST', `${S}/v2`, { email: 'puppet@acme.test', skipInviteEmail: true }, kidHdr));
    const members = await as(vendor, 'GET', `${S}/v1`, undefined, kidHdr);
    assert.equal(members.body._metadata.totalItems, 0, 'nobody joined');
    const puppet = { email: 'puppet@acme.test', roleIds: [role.viewer] };
    const within = await as(mallory, 'POST', `${S}/v1`, puppet, kidHdr);
    assert.equal(within.status, 201, JSON.stringify(within.body));
    const kid2 = await as(vendor, 'POST', '/tenants/resources/sub-tenants/v1', sub('sr-kid2'));
    assert.equal(kid2.status, 201, JSON.stringify(kid2.body));
    const kid2Hdr = { 'gatehouse-tenant-id': 'sr-kid2' };
    const byAdmin = await as(ada, 'POST', `${S}/v1`, { email: 'kid-admin@acme.test' }, kid2Hdr);
    assert.equal(byAdmin.status, 201, JSON.stringify(byAdmin.body));
    assert.deepEqual(
      byAdmin.body.roles.map((r: any) => r.key),
      ['admin'],
      'the admin may give the first-user roles',
    );
  });
});
