import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

let t: TestApp;
let vendor: string;
const R1 = '/identity/resources/roles/v1';
const R2 = '/identity/resources/roles/v2';
const P = '/identity/resources/permissions/v1';
const C = `${P}/categories`;
const H = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });

const SEED = {
  admin: 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9',
  readOnly: 'c784abeb-f295-45fb-84ed-19a1652cfb43',
  category: '8df9d228-9440-44ec-bbb8-2ba28121e0dd',
};
const FE_KEYS = [
  'fe.account-settings.read',
  'fe.account-settings.write',
  'fe.account-settings.delete.account',
  'fe.account-hierarchy.read.subaccount',
  'fe.account-hierarchy.write.subaccount',
  'fe.secure.read.users',
  'fe.secure.write.users',
  'fe.secure.delete.users',
  'fe.secure.read.roles',
  'fe.secure.write.roles',
  'fe.secure.read.sessions',
  'fe.secure.delete.sessions',
  'fe.secure.read.securityPolicy',
  'fe.secure.write.securityPolicy',
  // SCIM connections, SSO configuration, account API tokens and impersonation.
  'fe.secure.read.scim',
  'fe.secure.write.scim',
  'fe.secure.delete.scim',
  'fe.secure.read.samlConfiguration',
  'fe.secure.write.samlConfiguration',
  'fe.secure.read.tenantApiTokens',
  'fe.secure.write.tenantApiTokens',
  'fe.secure.delete.tenantApiTokens',
  'fe.secure.impersonate.users',
  // The audit log routes' read permission.
  'fe.secure.read.audits',
];
/** Impersonation is seeded but held by no role: a vendor grants it deliberately. */
const ADMIN_KEYS = FE_KEYS.filter((k) => k !== 'fe.secure.impersonate.users');
const READ_KEYS = FE_KEYS.filter((k) => k.includes('.read'));
const NOBODY = '00000000-0000-4000-8000-000000000000';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const call = (
  method: string,
  url: string,
  o: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
) => t.call(method, url, { token: vendor, ...o });
const sorted = (a: string[]) => [...a].sort();
/** Permission ids by key, from GET permissions. */
async function permissionIds(): Promise<Record<string, string>> {
  const r = await call('GET', P);
  return Object.fromEntries(r.body.map((p: { key: string; id: string }) => [p.key, p.id]));
}
async function createRoles(body: unknown[], tenantId?: string) {
  const r = await call('POST', R1, { body, headers: tenantId ? H(tenantId) : {} });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as any[];
}
const keysOf = (roles: { key: string; tenantId: string | null }[]) =>
  roles.map((r) => `${r.tenantId ?? '-'}/${r.key}`).sort();

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['acme', 'globex', 'doomed']) {
    const r = await t.call('POST', '/tenants/resources/tenants/v1', {
      token: vendor,
      body: { tenantId, name: tenantId },
    });
    assert.equal(r.status, 201);
  }
});
after(async () => t?.close());

describe('seeds', () => {
  test('built-in permissions, their category and the Admin and ReadOnly roles', async () => {
    const perms = await call('GET', P);
    assert.equal(perms.status, 200);
    const fe = perms.body.filter((p: any) => p.key.startsWith('fe.'));
    assert.deepEqual(sorted(fe.map((p: any) => p.key)), sorted(FE_KEYS));
    for (const p of fe) {
      assert.equal(p.fePermission, true);
      assert.equal(p.categoryId, SEED.category);
      assert.equal(p.assignmentType, 'ASSIGNABLE');
      assert.match(p.createdAt, ISO);
      assert.ok(p.name && typeof p.description === 'string');
    }
    const ids = await permissionIds();

    const cats = await call('GET', C);
    assert.equal(cats.status, 200);
    const gh = cats.body.find((c: any) => c.id === SEED.category);
    assert.equal(gh.name, 'Gatehouse');
    assert.equal(gh.feCategory, true);

    const roles = await call('GET', R1);
    assert.equal(roles.status, 200);
    assert.deepEqual(
      roles.body.map((r: any) => r.key),
      ['admin', 'read-only'],
    );
    const [admin, readOnly] = roles.body;
    assert.deepEqual(admin, {
      id: SEED.admin,
      vendorId: t.ctx.environment.id,
      tenantId: null,
      key: 'admin',
      name: 'Admin',
      description: admin.description,
      isDefault: false,
      firstUserRole: true,
      level: 0,
      createdAt: admin.createdAt,
      updatedAt: admin.updatedAt,
      permissions: admin.permissions,
    });
    assert.deepEqual(sorted(admin.permissions), sorted(ADMIN_KEYS.map((k) => ids[k])));
    assert.equal(readOnly.id, SEED.readOnly);
    assert.equal(readOnly.name, 'ReadOnly');
    assert.equal(readOnly.isDefault, true);
    assert.equal(readOnly.firstUserRole, false);
    assert.equal(readOnly.level, 1);
    assert.deepEqual(sorted(readOnly.permissions), sorted(READ_KEYS.map((k) => ids[k])));
    const readRoles = perms.body.find((p: any) => p.key === 'fe.secure.read.roles').roleIds;
    assert.deepEqual(sorted(readRoles), sorted([SEED.admin, SEED.readOnly]));
  });
});

describe('roles v1', () => {
  test('create environment and account roles; the header chooses what GET shows', async () => {
    const env = await createRoles([
      { key: 'editor', name: 'Editor', description: 'Edits', level: 2, isDefault: true, migrateRole: true },
    ]);
    assert.equal(env.length, 1);
    assert.equal(env[0].tenantId, null);
    assert.equal(env[0].vendorId, t.ctx.environment.id);
    assert.equal(env[0].description, 'Edits');
    assert.equal(env[0].isDefault, true);
    assert.equal(env[0].firstUserRole, false);
    assert.deepEqual(env[0].permissions, []);
    assert.match(env[0].createdAt, ISO);

    const acme = await createRoles(
      [
        { key: 'editor', name: 'Acme editor', level: 3 },
        { key: 'acme-owner', name: 'Owner', level: 0, firstUserRole: true, isDefault: true },
      ],
      'acme',
    );
    assert.deepEqual(
      acme.map((r) => [r.key, r.tenantId, r.description]),
      [
        ['editor', 'acme', ''],
        ['acme-owner', 'acme', ''],
      ],
    );
    await createRoles([{ key: 'globex-only', name: 'G', level: 5 }], 'globex');

    const none = await call('GET', R1);
    assert.deepEqual(keysOf(none.body), ['-/admin', '-/editor', '-/read-only']);
    const withAcme = await call('GET', R1, { headers: H('acme') });
    assert.deepEqual(keysOf(withAcme.body), ['-/admin', '-/editor', '-/read-only', 'acme/acme-owner', 'acme/editor']);
    // Level order, then key.
    assert.deepEqual(
      withAcme.body.map((r: any) => r.level),
      [0, 0, 1, 2, 3],
    );
    const withGlobex = await call('GET', R1, { headers: H('globex') });
    assert.deepEqual(keysOf(withGlobex.body), ['-/admin', '-/editor', '-/read-only', 'globex/globex-only']);
    // The compatibility header and prefix work too.
    const compat = await call('GET', `/frontegg${R1}`, { headers: { 'frontegg-tenant-id': 'globex' } });
    assert.deepEqual(keysOf(compat.body), keysOf(withGlobex.body));
  });

  test('duplicate keys are 409 within a scope; an unknown account is 404; bad fields are 400', async () => {
    const dupEnv = await call('POST', R1, { body: [{ key: 'editor', name: 'x', level: 1 }] });
    assert.equal(dupEnv.status, 409);
    assert.equal(dupEnv.body.errorCode, 'GH-40002');
    assert.match(dupEnv.body.errors[0], /editor/);
    const dupAcme = await call('POST', R1, {
      body: [
        { key: 'fresh', name: 'x', level: 1 },
        { key: 'acme-owner', name: 'x', level: 1 },
      ],
      headers: H('acme'),
    });
    assert.equal(dupAcme.status, 409);
    assert.match(dupAcme.body.errors[0], /acme-owner/);
    // All or none: 'fresh' was not created.
    assert.ok(!(await call('GET', R1, { headers: H('acme') })).body.some((r: any) => r.key === 'fresh'));
    const inBody = await call('POST', R1, {
      body: [
        { key: 'twice', name: 'a', level: 1 },
        { key: 'twice', name: 'b', level: 1 },
      ],
    });
    assert.equal(inBody.status, 409);
    assert.match(inBody.body.errors[0], /twice/);

    const unknown = await call('POST', R1, { body: [{ key: 'k', name: 'k', level: 1 }], headers: H('nobody') });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-30001');
    assert.equal((await call('GET', R1, { headers: H('nobody') })).status, 404);

    const cases: [unknown, RegExp][] = [
      [[{ name: 'x', level: 1 }], /body\.0\.key is required/],
      [[{ key: 'x', name: 'x' }], /body\.0\.level is required/],
      [[{ key: 'x', name: 'x', level: -1 }], /body\.0\.level must be >= 0/],
      [[{ key: 'x', name: 'x', level: 1.5 }], /body\.0\.level must be integer/],
      [[{ key: 'x', name: 'x', level: '1' }], /body\.0\.level must be integer/],
      [[{ key: ' x', name: 'x', level: 1 }], /body\.0\.key must match pattern/],
      [[{ key: 'x', name: '   ', level: 1 }], /body\.0\.name must not be blank/],
      [[{ key: 'x', name: 'a\u0000b', level: 1 }], /body\.0\.name must not contain the NUL character/],
      [[{ key: 'x', name: 'x', level: 1, description: 'bad \ud800' }], /body\.0\.description must not contain NUL/],
      [[{ key: 'x', name: 'x', level: 1, isDefault: 'yes' }], /body\.0\.isDefault must be boolean/],
      [[], /body must NOT have fewer than 1 items/],
      ['x', /body must be array/],
    ];
    for (const [body, msg] of cases) {
      const r = await call('POST', R1, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors.join(' '), msg);
    }
  });

  test('PATCH changes the given fields; key clashes are 409; unknown ids 404', async () => {
    const [role] = await createRoles([{ key: 'patchme', name: 'Patch me', level: 4 }], 'acme');
    const r = await call('PATCH', `${R1}/${role.id}`, {
      body: { name: 'Patched', level: 7, isDefault: true, firstUserRole: true, description: 'd' },
      headers: H('acme'),
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'Patched');
    assert.equal(r.body.level, 7);
    assert.equal(r.body.isDefault, true);
    assert.equal(r.body.firstUserRole, true);
    assert.equal(r.body.description, 'd');
    assert.equal(r.body.key, 'patchme');
    assert.equal(r.body.tenantId, 'acme');
    assert.ok(r.body.updatedAt >= role.updatedAt);

    const clash = await call('PATCH', `${R1}/${role.id}`, { body: { key: 'acme-owner' } });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.errorCode, 'GH-40002');
    // The same key as an environment role is fine: scopes differ.
    const envKey = await call('PATCH', `${R1}/${role.id}`, { body: { key: 'read-only' } });
    assert.equal(envKey.status, 200);
    assert.equal(envKey.body.key, 'read-only');

    for (const id of [NOBODY, 'not-a-uuid']) {
      const missing = await call('PATCH', `${R1}/${id}`, { body: { name: 'x' } });
      assert.equal(missing.status, 404, id);
      assert.equal(missing.body.errorCode, 'GH-40001');
    }
    // With another account's header the role is out of reach.
    const other = await call('PATCH', `${R1}/${role.id}`, { body: { name: 'x' }, headers: H('globex') });
    assert.equal(other.status, 404);
    const empty = await call('PATCH', `${R1}/${role.id}`, { body: {} });
    assert.equal(empty.status, 400);
    assert.match(empty.body.errors[0], /at least one/);
    const bad = await call('PATCH', `${R1}/${role.id}`, { body: { level: -3 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /body\.level must be >= 0/);
  });

  test('PUT permissions replaces the set; unknown permission ids are 400 naming them', async () => {
    const ids = await permissionIds();
    const [role] = await createRoles([{ key: 'perm-holder', name: 'Holder', level: 2 }]);
    const first = await call('PUT', `${R1}/${role.id}/permissions`, {
      body: { permissionIds: [ids['fe.secure.read.users'], ids['fe.secure.write.users']] },
    });
    assert.equal(first.status, 200);
    assert.deepEqual(
      sorted(first.body.permissions),
      sorted([ids['fe.secure.read.users'], ids['fe.secure.write.users']]),
    );
    assert.ok(first.body.updatedAt >= role.updatedAt);
    const listed = (await call('GET', R1)).body.find((r: any) => r.id === role.id);
    assert.deepEqual(listed.permissions, first.body.permissions);
    const perm = (await call('GET', P)).body.find((p: any) => p.key === 'fe.secure.write.users');
    assert.ok(perm.roleIds.includes(role.id));

    const second = await call('PUT', `${R1}/${role.id}/permissions`, {
      body: { permissionIds: [ids['fe.secure.read.roles'], ids['fe.secure.read.roles'].toUpperCase()] },
    });
    assert.deepEqual(second.body.permissions, [ids['fe.secure.read.roles']]);

    const bad = await call('PUT', `${R1}/${role.id}/permissions`, {
      body: { permissionIds: [ids['fe.secure.read.users'], NOBODY, 'junk'] },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-40007');
    assert.match(bad.body.errors[0], new RegExp(`permissionIds .*${NOBODY}, junk`));
    assert.deepEqual(bad.body.context, { field: 'permissionIds', ids: [NOBODY, 'junk'] });
    // Nothing changed.
    assert.deepEqual((await call('GET', R1)).body.find((r: any) => r.id === role.id).permissions, [
      ids['fe.secure.read.roles'],
    ]);

    const cleared = await call('PUT', `${R1}/${role.id}/permissions`, { body: { permissionIds: [] } });
    assert.deepEqual(cleared.body.permissions, []);
    assert.equal((await call('PUT', `${R1}/${NOBODY}/permissions`, { body: { permissionIds: [] } })).status, 404);
    assert.equal((await call('PUT', `${R1}/${role.id}/permissions`, { body: {} })).status, 400);
  });

  test('PUT tenant moves an environment role into an account', async () => {
    const [role] = await createRoles([{ key: 'movable', name: 'Movable', level: 3 }]);
    const moved = await call('PUT', `${R1}/${role.id}/tenant`, { body: { tenantId: 'globex' } });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.tenantId, 'globex');
    assert.ok(!(await call('GET', R1)).body.some((r: any) => r.id === role.id));
    assert.ok((await call('GET', R1, { headers: H('globex') })).body.some((r: any) => r.id === role.id));
    assert.ok(!(await call('GET', R1, { headers: H('acme') })).body.some((r: any) => r.id === role.id));

    const again = await call('PUT', `${R1}/${role.id}/tenant`, { body: { tenantId: 'acme' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.errorCode, 'GH-40009');
    // Moving into the account it already belongs to is a no-op.
    assert.equal((await call('PUT', `${R1}/${role.id}/tenant`, { body: { tenantId: 'globex' } })).status, 200);

    const [clash] = await createRoles([{ key: 'acme-owner', name: 'Env owner', level: 3 }]);
    const taken = await call('PUT', `${R1}/${clash.id}/tenant`, { body: { tenantId: 'acme' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.errorCode, 'GH-40002');
    const noAccount = await call('PUT', `${R1}/${clash.id}/tenant`, { body: { tenantId: 'nobody' } });
    assert.equal(noAccount.status, 404);
    assert.equal(noAccount.body.errorCode, 'GH-30001');
    assert.equal((await call('PUT', `${R1}/${NOBODY}/tenant`, { body: { tenantId: 'acme' } })).status, 404);
    assert.equal((await call('PUT', `${R1}/${clash.id}/tenant`, { body: {} })).status, 400);
    assert.equal((await call('DELETE', `${R1}/${clash.id}`)).status, 204);
  });

  test('DELETE removes the role and its permission links', async () => {
    const ids = await permissionIds();
    const [role] = await createRoles([{ key: 'doomed-role', name: 'Doomed', level: 3 }], 'acme');
    await call('PUT', `${R1}/${role.id}/permissions`, { body: { permissionIds: [ids['fe.secure.read.sessions']] } });
    const wrongScope = await call('DELETE', `${R1}/${role.id}`, { headers: H('globex') });
    assert.equal(wrongScope.status, 404);
    const r = await call('DELETE', `${R1}/${role.id}`, { headers: H('acme') });
    assert.equal(r.status, 204);
    assert.equal(r.body, undefined);
    assert.equal((await call('DELETE', `${R1}/${role.id}`)).status, 404);
    assert.equal((await call('DELETE', `${R1}/junk`)).status, 404);
    assert.ok(!(await call('GET', R1, { headers: H('acme') })).body.some((x: any) => x.id === role.id));
    const perm = (await call('GET', P)).body.find((p: any) => p.key === 'fe.secure.read.sessions');
    assert.ok(!perm.roleIds.includes(role.id));
  });
});

describe('permissions', () => {
  test('create, read, update, delete', async () => {
    const r = await call('POST', P, {
      body: [
        { key: 'reports.read', name: 'Read reports', description: 'See reports' },
        { key: 'reports.export.*', name: 'Export anything', assignmentType: 'NEVER', categoryId: SEED.category },
      ],
    });
    assert.equal(r.status, 201);
    const [read, exp] = r.body;
    assert.deepEqual(read, {
      id: read.id,
      key: 'reports.read',
      name: 'Read reports',
      description: 'See reports',
      createdAt: read.createdAt,
      updatedAt: read.updatedAt,
      roleIds: [],
      categoryId: null,
      fePermission: false,
      assignmentType: 'ASSIGNABLE',
    });
    assert.match(read.id, /^[0-9a-f-]{36}$/);
    assert.equal(exp.assignmentType, 'NEVER');
    assert.equal(exp.categoryId, SEED.category);
    const listed = (await call('GET', P)).body;
    assert.deepEqual(
      listed.find((p: any) => p.id === read.id),
      read,
    );
    // Key order.
    assert.deepEqual(
      listed.map((p: any) => p.key),
      sorted(listed.map((p: any) => p.key)),
    );

    const patched = await call('PATCH', `${P}/${read.id}`, {
      body: { key: 'reports.view', name: 'View reports', categoryId: SEED.category },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.key, 'reports.view');
    assert.equal(patched.body.name, 'View reports');
    assert.equal(patched.body.description, 'See reports');
    assert.equal(patched.body.categoryId, SEED.category);
    const detached = await call('PATCH', `${P}/${read.id}`, { body: { categoryId: null } });
    assert.equal(detached.body.categoryId, null);

    const [holder] = await createRoles([{ key: 'report-holder', name: 'R', level: 3 }]);
    await call('PUT', `${R1}/${holder.id}/permissions`, { body: { permissionIds: [read.id, exp.id] } });
    const del = await call('DELETE', `${P}/${read.id}`);
    assert.equal(del.status, 204);
    assert.equal((await call('DELETE', `${P}/${read.id}`)).status, 404);
    const after = (await call('GET', R1)).body.find((x: any) => x.id === holder.id);
    assert.deepEqual(after.permissions, [exp.id]);
    assert.ok(!(await call('GET', P)).body.some((p: any) => p.id === read.id));
  });

  test('bad keys are 400; duplicates 409; unknown ids 404 in the path and 400 in the body', async () => {
    for (const key of ['', 'has space', '.leading', 'trailing.', 'a..b', 'a.b*', '*.a', 'ü.x', 'a/b']) {
      const r = await call('POST', P, { body: [{ key, name: 'x' }] });
      assert.equal(r.status, 400, key);
      assert.match(r.body.errors[0], /body\.0\.key/);
    }
    const ok = await call('POST', P, { body: [{ key: 'Billing_v2.invoices-all.*', name: 'ok' }] });
    assert.equal(ok.status, 201);

    const dup = await call('POST', P, {
      body: [
        { key: 'fresh.one', name: 'x' },
        { key: 'fe.secure.read.users', name: 'x' },
      ],
    });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-40004');
    assert.match(dup.body.errors[0], /fe\.secure\.read\.users/);
    assert.ok(!(await call('GET', P)).body.some((p: any) => p.key === 'fresh.one'));
    const inBody = await call('POST', P, {
      body: [
        { key: 'x.y', name: 'x' },
        { key: 'x.y', name: 'x' },
      ],
    });
    assert.equal(inBody.status, 409);

    const badCategory = await call('POST', P, { body: [{ key: 'x.z', name: 'x', categoryId: NOBODY }] });
    assert.equal(badCategory.status, 400);
    assert.equal(badCategory.body.errorCode, 'GH-40007');
    assert.match(badCategory.body.errors[0], /categoryId/);
    const badType = await call('POST', P, { body: [{ key: 'x.z', name: 'x', assignmentType: 'SOMETIMES' }] });
    assert.equal(badType.status, 400);

    const id = ok.body[0].id;
    const clash = await call('PATCH', `${P}/${id}`, { body: { key: 'fe.secure.read.users' } });
    assert.equal(clash.status, 409);
    const badKey = await call('PATCH', `${P}/${id}`, { body: { key: 'no spaces allowed' } });
    assert.equal(badKey.status, 400);
    const badCat = await call('PATCH', `${P}/${id}`, { body: { categoryId: 'junk' } });
    assert.equal(badCat.status, 400);
    assert.match(badCat.body.errors[0], /categoryId .*junk/);
    assert.equal((await call('PATCH', `${P}/${id}`, { body: {} })).status, 400);
    for (const missing of [NOBODY, 'junk']) {
      const r = await call('PATCH', `${P}/${missing}`, { body: { name: 'x' } });
      assert.equal(r.status, 404);
      assert.equal(r.body.errorCode, 'GH-40003');
      assert.equal((await call('DELETE', `${P}/${missing}`)).status, 404);
      assert.equal((await call('PUT', `${P}/${missing}/roles`, { body: { roleIds: [] } })).status, 404);
    }
  });

  test('built-in permissions: no delete, no key change; name and description may change', async () => {
    const ids = await permissionIds();
    const id = ids['fe.account-settings.read'];
    const del = await call('DELETE', `${P}/${id}`);
    assert.equal(del.status, 403);
    assert.equal(del.body.errorCode, 'GH-40008');
    const rekey = await call('PATCH', `${P}/${id}`, { body: { key: 'fe.account-settings.view' } });
    assert.equal(rekey.status, 403);
    assert.equal(rekey.body.errorCode, 'GH-40008');
    const same = await call('PATCH', `${P}/${id}`, { body: { key: 'fe.account-settings.read', name: 'See settings' } });
    assert.equal(same.status, 200);
    assert.equal(same.body.name, 'See settings');
    assert.equal(same.body.fePermission, true);
    assert.ok((await permissionIds())['fe.account-settings.read']);
  });

  test('PUT roles sets exactly which roles hold a permission', async () => {
    const [perm] = (await call('POST', P, { body: [{ key: 'widgets.use', name: 'Use widgets' }] })).body;
    const [a, b] = await createRoles([
      { key: 'w-a', name: 'A', level: 2 },
      { key: 'w-b', name: 'B', level: 2 },
    ]);
    const [c] = await createRoles([{ key: 'w-c', name: 'C', level: 2 }], 'acme');
    const first = await call('PUT', `${P}/${perm.id}/roles`, { body: { roleIds: [a.id, c.id] } });
    assert.equal(first.status, 200);
    assert.deepEqual(sorted(first.body.roleIds), sorted([a.id, c.id]));
    const second = await call('PUT', `${P}/${perm.id}/roles`, { body: { roleIds: [b.id, c.id] } });
    assert.deepEqual(sorted(second.body.roleIds), sorted([b.id, c.id]));
    const roles = (await call('GET', R1, { headers: H('acme') })).body;
    const holds = (id: string) => roles.find((r: any) => r.id === id).permissions.includes(perm.id);
    assert.deepEqual([holds(a.id), holds(b.id), holds(c.id)], [false, true, true]);
    assert.ok(roles.find((r: any) => r.id === b.id).updatedAt >= b.updatedAt);

    const bad = await call('PUT', `${P}/${perm.id}/roles`, { body: { roleIds: [a.id, NOBODY] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-40007');
    assert.match(bad.body.errors[0], new RegExp(`roleIds .*${NOBODY}`));
    assert.deepEqual(
      sorted((await call('GET', P)).body.find((p: any) => p.id === perm.id).roleIds),
      sorted([b.id, c.id]),
    );
    const none = await call('PUT', `${P}/${perm.id}/roles`, { body: { roleIds: [] } });
    assert.deepEqual(none.body.roleIds, []);
  });

  test('classification sets the assignment type of several permissions and answers one PermissionResponse', async () => {
    const made = (
      await call('POST', P, {
        body: [
          { key: 'cls.a', name: 'A' },
          { key: 'cls.b', name: 'B' },
        ],
      })
    ).body;
    // The answer is one permission record (routes.md: PermissionResponse): the one named first, in body order.
    const r = await call('PUT', `${P}/classification`, {
      body: { permissionIds: [made[1].id, made[0].id], type: 'ALWAYS' },
    });
    assert.equal(r.status, 200);
    assert.ok(!Array.isArray(r.body));
    const listed = (await call('GET', P)).body.filter((p: any) => p.key.startsWith('cls.'));
    assert.deepEqual(
      listed.map((p: any) => [p.key, p.assignmentType]),
      [
        ['cls.a', 'ALWAYS'],
        ['cls.b', 'ALWAYS'],
      ],
    );
    assert.deepEqual(r.body, listed[1]);
    for (const field of [
      'id',
      'key',
      'name',
      'description',
      'createdAt',
      'updatedAt',
      'roleIds',
      'categoryId',
      'fePermission',
    ])
      assert.ok(field in r.body, field);
    // One id (upper-case: ids compare case-insensitively): that permission.
    const one = await call('PUT', `${P}/classification`, {
      body: { permissionIds: [made[0].id.toUpperCase()], type: 'ASSIGNABLE' },
    });
    assert.equal(one.status, 200);
    assert.equal(one.body.key, 'cls.a');
    assert.equal(one.body.assignmentType, 'ASSIGNABLE');
    await call('PUT', `${P}/classification`, { body: { permissionIds: [made[0].id], type: 'ALWAYS' } });
    const unknown = await call('PUT', `${P}/classification`, {
      body: { permissionIds: [made[0].id, NOBODY], type: 'NEVER' },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.errors[0], new RegExp(NOBODY));
    assert.equal((await call('GET', P)).body.find((p: any) => p.key === 'cls.a').assignmentType, 'ALWAYS');
    const badType = await call('PUT', `${P}/classification`, { body: { permissionIds: [made[0].id], type: 'MAYBE' } });
    assert.equal(badType.status, 400);
    assert.match(badType.body.errors.join(' '), /body\.type/);
    assert.equal(
      (await call('PUT', `${P}/classification`, { body: { permissionIds: [], type: 'NEVER' } })).status,
      400,
    );
  });
});

describe('permission categories', () => {
  test('create (with and without an id), update, list', async () => {
    const fixed = 'a6e1f7d2-3b4c-4d5e-8f90-1a2b3c4d5e6f';
    const r = await call('POST', C, { body: { id: fixed, name: 'Billing', description: 'Money' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      id: fixed,
      name: 'Billing',
      description: 'Money',
      createdAt: r.body.createdAt,
      updatedAt: r.body.updatedAt,
      feCategory: false,
    });
    const gen = await call('POST', C, { body: { name: 'Reports' } });
    assert.equal(gen.status, 201);
    assert.match(gen.body.id, /^[0-9a-f-]{36}$/);
    assert.equal(gen.body.description, '');

    const dupName = await call('POST', C, { body: { name: 'billing' } });
    assert.equal(dupName.status, 409);
    assert.equal(dupName.body.errorCode, 'GH-40006');
    const dupId = await call('POST', C, { body: { id: fixed, name: 'Other' } });
    assert.equal(dupId.status, 409);
    const badId = await call('POST', C, { body: { id: 'nope', name: 'Other' } });
    assert.equal(badId.status, 400);
    assert.match(badId.body.errors[0], /body\.id must match format "uuid"/);
    assert.equal((await call('POST', C, { body: { description: 'no name' } })).status, 400);

    const patched = await call('PATCH', `${C}/${fixed}`, { body: { description: 'Invoices' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'Billing');
    assert.equal(patched.body.description, 'Invoices');
    const clash = await call('PATCH', `${C}/${fixed}`, { body: { name: 'REPORTS' } });
    assert.equal(clash.status, 409);
    const rename = await call('PATCH', `${C}/${fixed}`, { body: { name: 'BILLING' } });
    assert.equal(rename.body.name, 'BILLING');
    assert.equal((await call('PATCH', `${C}/${fixed}`, { body: {} })).status, 400);
    assert.equal((await call('PATCH', `${C}/${NOBODY}`, { body: { name: 'x' } })).status, 404);
    assert.equal((await call('PATCH', `${C}/junk`, { body: { name: 'x' } })).body.errorCode, 'GH-40005');

    const list = (await call('GET', C)).body;
    assert.equal(list[0].id, SEED.category);
    assert.ok(list.some((c: any) => c.id === fixed && c.name === 'BILLING'));
  });

  test('deleting a category detaches its permissions; the built-in one cannot be deleted', async () => {
    const cat = (await call('POST', C, { body: { name: 'Temporary' } })).body;
    const [perm] = (await call('POST', P, { body: [{ key: 'temp.perm', name: 'T', categoryId: cat.id }] })).body;
    assert.equal(perm.categoryId, cat.id);
    const del = await call('DELETE', `${C}/${cat.id}`);
    assert.equal(del.status, 200);
    assert.equal(del.body.id, cat.id);
    assert.ok(!(await call('GET', C)).body.some((c: any) => c.id === cat.id));
    const after = (await call('GET', P)).body.find((p: any) => p.id === perm.id);
    assert.equal(after.categoryId, null);
    assert.equal((await call('DELETE', `${C}/${cat.id}`)).status, 404);

    const builtIn = await call('DELETE', `${C}/${SEED.category}`);
    assert.equal(builtIn.status, 403);
    assert.equal(builtIn.body.errorCode, 'GH-40008');
  });
});

describe('account roles v2', () => {
  test('pages, sorts and filters; the header adds the account roles', async () => {
    const base = await createRoles(
      Array.from({ length: 7 }, (_, i) => ({
        key: `page-${i}`,
        name: `Page ${String.fromCharCode(71 - i)}`,
        level: 10 + (i % 3),
        description: `d${i}`,
      })),
      'doomed',
    );
    assert.equal(base.length, 7);
    const all = (await call('GET', R1, { headers: H('doomed') })).body;
    const first = await call('GET', `${R2}?_limit=3&_offset=0&_sortBy=key&_order=ASC`, { headers: H('doomed') });
    assert.equal(first.status, 200);
    assert.equal(first.body._metadata.totalItems, all.length);
    assert.equal(first.body._metadata.totalPages, Math.ceil(all.length / 3));
    const keys = sorted(all.map((r: any) => r.key));
    assert.deepEqual(
      first.body.items.map((r: any) => r.key),
      keys.slice(0, 3),
    );
    assert.equal(first.body._links.prev, '');
    assert.match(first.body._links.next, /_offset=1/);
    assert.match(first.body._links.next, /_sortBy=key/);
    const second = await call('GET', first.body._links.next, { headers: H('doomed') });
    assert.deepEqual(
      second.body.items.map((r: any) => r.key),
      keys.slice(3, 6),
    );
    const past = await call('GET', `${R2}?_limit=3&_offset=99`, { headers: H('doomed') });
    assert.deepEqual(past.body.items, []);

    const byName = await call('GET', `${R2}?_sortBy=name&_order=DESC&_filter=page`, { headers: H('doomed') });
    assert.deepEqual(
      byName.body.items.map((r: any) => r.name),
      ['Page G', 'Page F', 'Page E', 'Page D', 'Page C', 'Page B', 'Page A'],
    );
    const byLevel = await call('GET', `${R2}?_sortBy=level&_order=DESC&_filter=PAGE-`, { headers: H('doomed') });
    assert.deepEqual(
      byLevel.body.items.map((r: any) => r.level),
      [12, 12, 11, 11, 10, 10, 10],
    );
    assert.deepEqual(
      byLevel.body.items.slice(0, 2).map((r: any) => r.key),
      ['page-5', 'page-2'],
    );
    const filtered = await call('GET', `${R2}?_filter=page%20b`, { headers: H('doomed') });
    assert.deepEqual(
      filtered.body.items.map((r: any) => r.key),
      ['page-5'],
    );
    for (const sortBy of ['description', 'isDefault', 'firstUserRole', 'updatedAt', 'createdAt']) {
      const r = await call('GET', `${R2}?_sortBy=${sortBy}&_limit=200`, { headers: H('doomed') });
      assert.equal(r.status, 200, sortBy);
      assert.equal(r.body.items.length, all.length);
    }
    // Without a header: environment roles only.
    const env = await call('GET', R2);
    assert.ok(env.body.items.every((r: any) => r.tenantId === null));
    assert.equal(env.body._metadata.totalItems, (await call('GET', R1)).body.length);
    // Bad paging input is a 400.
    for (const q of ['_limit=0', '_limit=201', '_offset=-1', '_sortBy=color', '_order=UP']) {
      const r = await call('GET', `${R2}?${q}`);
      assert.equal(r.status, 400, q);
    }
    assert.equal((await call('GET', R2, { headers: H('nobody') })).status, 404);
  });

  test('create an account role from a base role plus permissions', async () => {
    const ids = await permissionIds();
    const r = await call('POST', R2, {
      headers: H('acme'),
      body: {
        key: 'auditor',
        name: 'Auditor',
        description: 'Reads all',
        isDefault: false,
        baseRoleId: SEED.readOnly,
        permissionIds: [ids['fe.secure.delete.sessions']],
      },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'acme');
    assert.equal(r.body.key, 'auditor');
    assert.equal(r.body.level, 1);
    assert.equal(r.body.firstUserRole, false);
    assert.equal(r.body.vendorId, t.ctx.environment.id);
    assert.deepEqual(
      sorted(r.body.permissions),
      sorted([...READ_KEYS.map((k) => ids[k]), ids['fe.secure.delete.sessions']]),
    );

    const plain = await call('POST', R2, { headers: H('acme'), body: { key: 'plain', name: 'Plain' } });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body.permissions, []);
    const acmeLevels = (await call('GET', R1, { headers: H('acme') })).body.map((x: any) => x.level);
    assert.equal(plain.body.level, Math.max(...acmeLevels));

    const noHeader = await call('POST', R2, { body: { key: 'x', name: 'x' } });
    assert.equal(noHeader.status, 400);
    assert.equal(noHeader.body.errorCode, 'GH-20006');
    assert.equal((await call('POST', R2, { headers: H('nobody'), body: { key: 'x', name: 'x' } })).status, 404);
    const dup = await call('POST', R2, { headers: H('acme'), body: { key: 'auditor', name: 'x' } });
    assert.equal(dup.status, 409);
    const globexRole = (await call('GET', R1, { headers: H('globex') })).body.find((x: any) => x.key === 'globex-only');
    const otherBase = await call('POST', R2, {
      headers: H('acme'),
      body: { key: 'x', name: 'x', baseRoleId: globexRole.id },
    });
    assert.equal(otherBase.status, 400);
    assert.match(otherBase.body.errors[0], /baseRoleId/);
    const unknownPerm = await call('POST', R2, {
      headers: H('acme'),
      body: { key: 'x', name: 'x', permissionIds: ['junk'] },
    });
    assert.equal(unknownPerm.status, 400);
    assert.match(unknownPerm.body.errors[0], /permissionIds .*junk/);
    assert.ok(!(await call('GET', R1, { headers: H('acme') })).body.some((x: any) => x.key === 'x'));
  });

  test('distinct levels and distinct accounts', async () => {
    const envLevels = (await call('GET', R1)).body.map((r: any) => r.level);
    const levels = await call('GET', `${R2}/distinct-levels`);
    assert.equal(levels.status, 200);
    assert.deepEqual(
      levels.body,
      [...new Set<number>(envLevels)].sort((a, b) => a - b),
    );
    const doomed = await call('GET', `${R2}/distinct-levels`, { headers: H('doomed') });
    assert.ok(doomed.body.includes(10) && doomed.body.includes(12));
    assert.ok(!levels.body.includes(10));
    assert.equal((await call('GET', `${R2}/distinct-levels`, { headers: H('nobody') })).status, 404);
    const tenants = await call('GET', `${R2}/distinct-tenants`);
    assert.equal(tenants.status, 200);
    assert.deepEqual(tenants.body, ['acme', 'doomed', 'globex']);
  });
});

describe('user tokens', () => {
  test('read roles with fe.secure.read.roles: environment roles plus their own account, header ignored', async () => {
    const token = await t.userToken({ tenantId: 'acme', permissions: ['fe.secure.read.roles'] });
    const v1 = await t.call('GET', R1, { token, headers: H('globex') });
    assert.equal(v1.status, 200);
    assert.ok(v1.body.some((r: any) => r.tenantId === 'acme'));
    assert.ok(v1.body.every((r: any) => r.tenantId === null || r.tenantId === 'acme'));
    assert.deepEqual(v1.body, (await call('GET', R1, { headers: H('acme') })).body);
    const v2 = await t.call('GET', `${R2}?_limit=200`, { token });
    assert.equal(v2.status, 200);
    assert.equal(v2.body._metadata.totalItems, v1.body.length);
    assert.equal((await t.call('GET', P, { token })).status, 200);
    assert.equal((await t.call('GET', C, { token })).status, 200);

    const wildcard = await t.userToken({ tenantId: 'acme', permissions: ['fe.secure.*'] });
    assert.equal((await t.call('GET', R1, { token: wildcard })).status, 200);

    const without = await t.userToken({ tenantId: 'acme', permissions: ['fe.secure.read.users'] });
    for (const url of [R1, R2, P]) {
      const r = await t.call('GET', url, { token: without });
      assert.equal(r.status, 403, url);
      assert.equal(r.body.errorCode, 'GH-20004');
    }
    // Management routes are for environment tokens only; a user token writes only its own account's roles.
    const admin = await t.userToken({ tenantId: 'acme', permissions: ['*'] });
    for (const [method, url, body] of [
      ['PATCH', `${R1}/${SEED.admin}`, { name: 'x' }],
      ['DELETE', `${R1}/${SEED.admin}`, undefined],
      ['PUT', `${R1}/${SEED.admin}/permissions`, { permissionIds: [] }],
    ] as const) {
      const r = await t.call(method, url, { token: admin, body });
      assert.equal(r.status, 403, `${method} ${url}`);
      assert.equal(r.body.errorCode, 'GH-40011');
    }
    for (const [method, url, body] of [
      ['POST', P, [{ key: 'u.x', name: 'u' }]],
      ['GET', `${R2}/distinct-tenants`, undefined],
    ] as const) {
      const r = await t.call(method, url, { token: admin, body });
      assert.equal(r.status, 403, `${method} ${url}`);
      assert.equal(r.body.errorCode, 'GH-20003');
    }
    assert.equal((await t.call('GET', R1)).status, 401);
  });

  test('create account roles with fe.secure.write.roles: own account, only permissions the user holds', async () => {
    const ids = await permissionIds();
    const held = ['fe.secure.write.roles', 'fe.secure.read.*'];
    const token = await t.userToken({ tenantId: 'globex', permissions: held });
    const r = await t.call('POST', R2, {
      token,
      headers: H('acme'),
      body: { key: 'support', name: 'Support', permissionIds: [ids['fe.secure.read.users']] },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'globex');
    assert.deepEqual(r.body.permissions, [ids['fe.secure.read.users']]);

    const notHeld = await t.call('POST', R2, {
      token,
      body: { key: 'escalate', name: 'E', permissionIds: [ids['fe.secure.delete.users']] },
    });
    assert.equal(notHeld.status, 403);
    assert.equal(notHeld.body.errorCode, 'GH-40010');
    assert.match(notHeld.body.errors[0], /fe\.secure\.delete\.users/);

    // A base role's permissions the user does not hold are left out.
    const fromAdmin = await t.call('POST', R2, {
      token,
      body: { key: 'mini-admin', name: 'Mini', baseRoleId: SEED.admin },
    });
    assert.equal(fromAdmin.status, 200);
    const heldOfAdmin = ['fe.secure.write.roles', ...ADMIN_KEYS.filter((k) => k.startsWith('fe.secure.read.'))];
    assert.deepEqual(sorted(fromAdmin.body.permissions), sorted(heldOfAdmin.map((k) => ids[k])));

    // NEVER-classified permissions cannot be put into account roles by users, even when held.
    await call('PUT', `${P}/classification`, {
      body: { permissionIds: [ids['fe.secure.read.sessions']], type: 'NEVER' },
    });
    const never = await t.call('POST', R2, {
      token,
      body: { key: 'never', name: 'N', permissionIds: [ids['fe.secure.read.sessions']] },
    });
    assert.equal(never.status, 403);
    assert.equal(never.body.errorCode, 'GH-40010');
    // An environment token may.
    const vendorNever = await call('POST', R2, {
      headers: H('globex'),
      body: { key: 'never', name: 'N', permissionIds: [ids['fe.secure.read.sessions']] },
    });
    assert.equal(vendorNever.status, 200);
    await call('PUT', `${P}/classification`, {
      body: { permissionIds: [ids['fe.secure.read.sessions']], type: 'ASSIGNABLE' },
    });

    const readOnly = await t.userToken({ tenantId: 'globex', permissions: ['fe.secure.read.roles'] });
    const denied = await t.call('POST', R2, { token: readOnly, body: { key: 'nope', name: 'N' } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.errorCode, 'GH-20004');
  });
});

describe('public functions for other modules', () => {
  test('default and first-user roles: the environment and the account, not other accounts', async () => {
    const roles = t.ctx.roles;
    const [acmeDefault] = await createRoles([{ key: 'acme-default', name: 'D', level: 8, isDefault: true }], 'acme');
    const [globexDefault] = await createRoles(
      [{ key: 'globex-default', name: 'D', level: 8, isDefault: true, firstUserRole: true }],
      'globex',
    );
    const defaults = await roles.defaultRoleIds(t.db, 'acme');
    assert.ok(defaults.includes(SEED.readOnly));
    assert.ok(defaults.includes(acmeDefault.id));
    assert.ok(!defaults.includes(globexDefault.id));
    assert.ok(!defaults.includes(SEED.admin));
    const envOnly = await roles.defaultRoleIds(t.db, 'no-such-account');
    const envDefaults = (await call('GET', R1)).body.filter((r: any) => r.isDefault).map((r: any) => r.id);
    assert.deepEqual(sorted(envOnly), sorted(envDefaults));

    const firstAcme = await roles.firstUserRoleIds(t.db, 'acme');
    assert.ok(firstAcme.includes(SEED.admin));
    assert.ok(!firstAcme.includes(globexDefault.id));
    const firstGlobex = await roles.firstUserRoleIds(t.db, 'globex');
    assert.ok(firstGlobex.includes(SEED.admin) && firstGlobex.includes(globexDefault.id));
    assert.deepEqual(firstGlobex.slice(0, 1), [SEED.admin]);
  });

  test('assertAssignable refuses unknown ids and roles of another account, naming them', async () => {
    const roles = t.ctx.roles;
    const acmeRole = (await call('GET', R1, { headers: H('acme') })).body.find((r: any) => r.key === 'acme-owner');
    const globexRole = (await call('GET', R1, { headers: H('globex') })).body.find((r: any) => r.key === 'globex-only');
    await roles.assertAssignable(t.db, 'acme', [SEED.admin, acmeRole.id, SEED.readOnly.toUpperCase()]);
    await roles.assertAssignable(t.db, 'acme', []);
    await assert.rejects(
      roles.assertAssignable(t.db, 'acme', [SEED.admin, globexRole.id, NOBODY, 'junk']),
      (err: any) => {
        assert.equal(err.status, 400);
        assert.equal(err.errorCode, 'GH-40007');
        assert.match(err.message, new RegExp(`${globexRole.id}, ${NOBODY}, junk`));
        assert.doesNotMatch(err.message, new RegExp(SEED.admin));
        return true;
      },
    );
    // Inside a transaction too.
    await t.db.transaction(async (tx) => {
      await roles.assertAssignable(tx, 'globex', [globexRole.id]);
    });
  });

  test('rolesByIds, permissionsOfRoles and permissionKeysOfRoles', async () => {
    const roles = t.ctx.roles;
    const ids = await permissionIds();
    const byIds = await roles.rolesByIds(t.db, [SEED.readOnly, SEED.admin, NOBODY, 'junk']);
    assert.deepEqual(
      byIds.map((r) => r.key),
      ['admin', 'read-only'],
    );
    assert.deepEqual(
      byIds[0],
      (await call('GET', R1)).body.find((r: any) => r.id === SEED.admin),
    );

    const keys = await roles.permissionKeysOfRoles(t.db, [SEED.admin, SEED.readOnly]);
    assert.deepEqual(keys, sorted(ADMIN_KEYS));
    assert.deepEqual(await roles.permissionKeysOfRoles(t.db, [SEED.readOnly]), sorted(READ_KEYS));
    assert.deepEqual(await roles.permissionKeysOfRoles(t.db, []), []);
    assert.deepEqual(await roles.permissionKeysOfRoles(t.db, ['junk']), []);

    const perms = await roles.permissionsOfRoles(t.db, [SEED.readOnly, SEED.readOnly]);
    assert.deepEqual(
      perms.map((p) => p.key),
      sorted(READ_KEYS),
    );
    assert.equal(perms[0].id, ids[perms[0].key]);
    assert.ok(perms[0].roleIds.includes(SEED.readOnly));
    assert.equal(perms[0].fePermission, true);
  });
});

describe('account removal', () => {
  test('removing an account removes its roles', async () => {
    const before = (await call('GET', R1, { headers: H('doomed') })).body.filter((r: any) => r.tenantId === 'doomed');
    assert.ok(before.length > 0);
    assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/doomed', { token: vendor })).status, 200);
    assert.deepEqual(
      await t.ctx.roles.rolesByIds(
        t.db,
        before.map((r: any) => r.id),
      ),
      [],
    );
    assert.ok(!(await call('GET', `${R2}/distinct-tenants`)).body.includes('doomed'));
    assert.equal((await call('GET', R1, { headers: H('doomed') })).status, 404);
  });
});
