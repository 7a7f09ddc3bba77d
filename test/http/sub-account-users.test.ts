import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const S = '/identity/resources/sub-tenants/users';
const U = '/identity/resources/users';
const ALL = ['fe.secure.read.users', 'fe.secure.write.users', 'fe.secure.delete.users'];
let roleIds: Record<string, string> = {};
let admin: any; // admin of sa-root
let kidAdmin: any; // admin of sa-kid

const fails = (r: { status: number; body: any }, status: number, code?: string, msg?: RegExp) => {
  assert.equal(r.status, status, JSON.stringify(r.body));
  if (code) assert.equal(r.body.errorCode, code);
  if (msg) assert.match(r.body.errors.join(' '), msg);
};
const as = (token: string, tenantId?: string, extra: Record<string, string> = {}) => ({
  token,
  headers: { ...(tenantId ? { 'gatehouse-tenant-id': tenantId } : {}), ...extra },
});
// The root account's admin (its first user): the token carries that role and its permissions (every fe.* one), as
// role changes are held to the caller's own roles.
const ADMIN = ['fe.*'];
const rootToken = (permissions = ADMIN) =>
  t.userToken({ tenantId: 'sa-root', sub: admin.id, permissions, roles: ['admin'] });
const emailsOf = async (tenantId: string) =>
  (await t.call('GET', `${S}/v1?_limit=200`, as(vendor, tenantId))).body.items.map((u: any) => u.email).sort();

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['sa-root', 'sa-other']) await account(t, { id });
  for (const [id, parent] of [
    ['sa-kid', 'sa-root'],
    ['sa-grand', 'sa-kid'],
  ]) {
    const r = await t.call('POST', '/tenants/resources/sub-tenants/v1', {
      token: vendor,
      body: { tenantId: id, name: id, parentTenantId: parent },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  roleIds = Object.fromEntries(
    (await t.call('GET', '/identity/resources/roles/v1', { token: vendor })).body.map((r: any) => [r.key, r.id]),
  );
  admin = (await t.call('POST', `${U}/v1`, { ...as(vendor, 'sa-root'), body: { email: 'root-admin@sa.test' } })).body;
  kidAdmin = (await t.call('POST', `${U}/v1`, { ...as(vendor, 'sa-kid'), body: { email: 'kid-admin@sa.test' } })).body;
  assert.deepEqual(
    admin.roles.map((r: any) => r.key),
    ['admin'],
  );
});
after(async () => t?.close());

describe('sub-account users: environment token', () => {
  test("creates a user in the account of the tenant header and lists that account's users, paged", async () => {
    const c = await t.call('POST', `${S}/v1`, {
      ...as(vendor, 'sa-grand'),
      body: { email: 'Gina@SA.test', name: 'Gina' },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.tenantId, 'sa-grand');
    assert.deepEqual(
      c.body.roles.map((r: any) => r.key),
      ['admin'],
      'the first user of the account gets the first-user role',
    );
    await t.call('POST', `${S}/v1`, { ...as(vendor, 'sa-grand'), body: { email: 'hal@sa.test' } });
    const p = await t.call('GET', `${S}/v1?_limit=1&_sortBy=email`, as(vendor, 'sa-grand'));
    assert.equal(p.status, 200);
    assert.deepEqual(
      p.body.items.map((u: any) => u.email),
      ['gina@sa.test'],
    );
    assert.deepEqual(p.body._metadata, { totalItems: 2, totalPages: 2 });
    assert.match(p.body._links.next, /_offset=1/);
    assert.deepEqual(await emailsOf('sa-grand'), ['gina@sa.test', 'hal@sa.test']);
  });

  test('the tenant header is required; an unknown account is a 404 for the environment token', async () => {
    fails(await t.call('GET', `${S}/v1`, as(vendor)), 400, 'GH-20006', /gatehouse-tenant-id/);
    fails(await t.call('GET', `${S}/v1`, as(vendor, 'sa-none')), 404, 'GH-30001');
    fails(await t.call('POST', `${S}/v1`, { ...as(vendor, 'sa-none'), body: { email: 'x@sa.test' } }), 404, 'GH-30001');
  });
});

describe('sub-account users: a user token reaches its account and the sub-accounts its access opens', () => {
  test('without sub-account access, only the own account is reachable', async () => {
    const u = await rootToken();
    assert.equal((await t.call('GET', `${S}/v1`, as(u, 'sa-root'))).status, 200);
    fails(await t.call('GET', `${S}/v1`, as(u, 'sa-kid')), 403, 'GH-30005');
  });

  test('with sub-account access: list, create, roles (assign, set, unassign) and removal in a sub-account', async () => {
    const v = await t.call('PUT', `${S}/v1/${admin.id}/access`, {
      ...as(vendor, 'sa-root'),
      body: { allowAccess: true },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    const u = await rootToken();
    const list = await t.call('GET', `${S}/v1`, as(u, 'sa-grand'));
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.equal(list.body._metadata.totalItems, 2);

    const c = await t.call('POST', `${S}/v1`, {
      ...as(u, 'sa-kid'),
      body: { email: 'ivy@sa.test', roleIds: [roleIds['read-only']] },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.tenantId, 'sa-kid');
    const ivy = c.body.id;

    const add = await t.call('POST', `${S}/v1/${ivy}/roles`, {
      ...as(u, 'sa-kid'),
      body: { roleIds: [roleIds.admin] },
    });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    assert.deepEqual(add.body.roles.map((r: any) => r.key).sort(), ['admin', 'read-only']);
    const set = await t.call('PATCH', `${S}/v1/${ivy}/roles`, {
      ...as(u, 'sa-kid'),
      body: { roleIds: [roleIds['read-only']] },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(
      set.body.roles.map((r: any) => r.key),
      ['read-only'],
    );
    const un = await t.call('DELETE', `${S}/v1/${ivy}/roles`, {
      ...as(u, 'sa-kid'),
      body: { roleIds: [roleIds['read-only']] },
    });
    assert.equal(un.status, 200);
    assert.deepEqual(un.body.roles, []);
    const get = await t.call('GET', `${U}/v1/${ivy}`, as(vendor, 'sa-kid'));
    assert.deepEqual(get.body.roles, [], 'the change is stored');

    const del = await t.call('DELETE', `${S}/v1`, { ...as(u, 'sa-kid'), body: { userId: ivy } });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal(!(await emailsOf('sa-kid')).includes('ivy@sa.test'), true);
    assert.equal(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${ivy}`, { token: vendor })).status,
      404,
      'a user left with no account is deleted',
    );
  });

  test("accounts outside the token's subtree answer the same 403 whether or not they exist", async () => {
    const u = await rootToken();
    const other = await t.call('GET', `${S}/v1`, as(u, 'sa-other'));
    const none = await t.call('GET', `${S}/v1`, as(u, 'sa-none'));
    fails(other, 403, 'GH-30005');
    fails(none, 403, 'GH-30005');
    assert.equal(other.body.errors[0].replace('sa-other', 'X'), none.body.errors[0].replace('sa-none', 'X'));
    fails(await t.call('POST', `${S}/v1`, { ...as(u, 'sa-other'), body: { email: 'nope@sa.test' } }), 403, 'GH-30005');
    assert.equal((await emailsOf('sa-other')).length, 0, 'nothing was created');
    // A membership of an account outside the token's subtree does not open it to this token (the token is for sa-root).
    assert.equal(
      (
        await t.call('POST', `${U}/v1/${admin.id}/tenant`, {
          token: vendor,
          body: { tenantId: 'sa-other', roleIds: [roleIds.admin] },
        })
      ).status,
      201,
    );
    fails(await t.call('GET', `${S}/v1`, as(u, 'sa-other')), 403, 'GH-30005');
    await t.call('DELETE', `${U}/v1/${admin.id}`, as(vendor, 'sa-other'));
    // Upwards is outside too: the sub-account's admin cannot manage its parent's users.
    const k = await t.userToken({ tenantId: 'sa-kid', sub: kidAdmin.id, permissions: ALL });
    fails(await t.call('DELETE', `${S}/v1`, { ...as(k, 'sa-root'), body: { userId: admin.id } }), 403, 'GH-30005');
    fails(
      await t.call('POST', `${S}/v1/${admin.id}/roles`, {
        ...as(k, 'sa-root'),
        body: { roleIds: [roleIds['read-only']] },
      }),
      403,
      'GH-30005',
    );
  });

  test('a disabled membership on the way down closes the sub-accounts below it', async () => {
    // The root admin is also a member of sa-kid, disabled there: that nearer membership governs sa-kid and sa-grand.
    assert.equal(
      (await t.call('POST', `${U}/v1/${admin.id}/tenant`, { token: vendor, body: { tenantId: 'sa-kid' } })).status,
      201,
    );
    assert.equal(
      (await t.call('POST', `/identity/resources/tenants/users/v1/${admin.id}/disable`, as(vendor, 'sa-kid'))).status,
      200,
    );
    const u = await rootToken();
    fails(await t.call('GET', `${S}/v1`, as(u, 'sa-grand')), 403, 'GH-30005');
    assert.equal((await t.call('GET', `${S}/v1`, as(u, 'sa-root'))).status, 200);
    await t.call('DELETE', `${U}/v1/${admin.id}`, as(vendor, 'sa-kid'));
    assert.equal((await t.call('GET', `${S}/v1`, as(u, 'sa-grand'))).status, 200, 'access through sa-root again');
  });

  test('the permission is needed: in the token, and in the membership that reaches the account', async () => {
    fails(
      await t.call('POST', `${S}/v1`, {
        ...as(await rootToken(['fe.secure.read.users']), 'sa-kid'),
        body: { email: 'p@sa.test' },
      }),
      403,
      'GH-20004',
    );
    // Member of sa-kid with the read-only role only (no write permission there): the nearer membership's roles count.
    assert.equal(
      (await t.call('POST', `${U}/v1/${admin.id}/tenant`, { token: vendor, body: { tenantId: 'sa-kid' } })).status,
      201,
    );
    assert.equal(
      (await t.call('PUT', `${S}/v1/${admin.id}/access`, { ...as(vendor, 'sa-kid'), body: { allowAccess: true } }))
        .status,
      200,
    );
    const r = await t.call('POST', `${S}/v1`, { ...as(await rootToken(), 'sa-grand'), body: { email: 'q@sa.test' } });
    fails(r, 403, 'GH-20004', /fe\.secure\.write\.users in account sa-kid/);
    await t.call('DELETE', `${U}/v1/${admin.id}`, as(vendor, 'sa-kid'));
    assert.equal((await emailsOf('sa-grand')).includes('q@sa.test'), false);
  });
});

describe('sub-account users: bad input', () => {
  test('each is a 4xx naming the field, and changes nothing', async () => {
    const u = await rootToken();
    const hal = (await t.call('GET', `${S}/v1?_email=hal@sa.test`, as(vendor, 'sa-grand'))).body.items[0];
    fails(await t.call('DELETE', `${S}/v1`, as(u, 'sa-grand')), 400, 'GH-10001', /body\.userId/);
    fails(
      await t.call('PATCH', `${S}/v1/${hal.id}/roles`, { ...as(u, 'sa-grand'), body: { roleIds: 'admin' } }),
      400,
      'GH-10001',
      /roleIds/,
    );
    fails(
      await t.call('PATCH', `${S}/v1/${hal.id}/roles`, {
        ...as(u, 'sa-grand'),
        body: { roleIds: ['00000000-0000-4000-8000-000000000000'] },
      }),
      400,
      'GH-40007',
    );
    fails(
      await t.call('POST', `${S}/v1/${hal.id}/roles`, { ...as(u, 'sa-grand'), body: { roleIds: [] } }),
      400,
      'GH-10001',
      /roleIds/,
    );
    fails(
      await t.call('PATCH', `${S}/v1/${admin.id}/roles`, { ...as(u, 'sa-grand'), body: { roleIds: [] } }),
      404,
      'GH-42005',
    );
    fails(
      await t.call('POST', `${S}/v1`, { ...as(u, 'sa-grand'), body: { email: 'not-an-email' } }),
      400,
      'GH-10001',
      /body\.email/,
    );
    fails(await t.call('POST', `${S}/v1`, { ...as(u, 'sa-grand'), body: { email: 'gina@sa.test' } }), 409);
    const after = (await t.call('GET', `${U}/v1/${hal.id}`, as(vendor, 'sa-grand'))).body;
    assert.deepEqual(
      after.roles.map((r: any) => r.key),
      hal.roles.map((r: any) => r.key),
    );
    assert.deepEqual(await emailsOf('sa-grand'), ['gina@sa.test', 'hal@sa.test']);
  });

  test('DELETE takes the user from the gatehouse-user-id header when the body has none', async () => {
    const c = await t.call('POST', `${S}/v1`, { ...as(vendor, 'sa-other'), body: { email: 'jo@sa.test' } });
    await t.call('POST', `${U}/v1/${c.body.id}/tenant`, { token: vendor, body: { tenantId: 'sa-root' } });
    const r = await t.call('DELETE', `${S}/v1`, as(vendor, 'sa-other', { 'gatehouse-user-id': c.body.id }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(await emailsOf('sa-other'), []);
    assert.deepEqual(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${c.body.id}`, { token: vendor })).body.tenantIds,
      ['sa-root'],
    );
  });
});

describe('sub-account users: invite (v2)', () => {
  test('invites into a sub-account with the body of POST /users/v2', async () => {
    const u = await rootToken();
    const r = await t.call('POST', `${S}/v2/`, { ...as(u, 'sa-kid'), body: { email: 'kim@sa.test', name: 'Kim' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.tenantId, 'sa-kid');
    fails(await t.call('POST', `${S}/v2/`, { ...as(u, 'sa-other'), body: { email: 'lou@sa.test' } }), 403, 'GH-30005');
  });
});

describe('users per account: POST /identity/resources/tenants/users/v1/count', () => {
  const C = '/identity/resources/tenants/users/v1/count';
  test('counts each account asked, in order (a repeated id once); unknown accounts count 0 (sa-root: its admin and jo)', async () => {
    const r = await t.call('POST', C, {
      token: vendor,
      body: { tenantIds: ['sa-grand', 'sa-none', 'sa-root', 'sa-grand'] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // totalAccessAllowedUsers: the root admin was given sub-account access above.
    assert.deepEqual(r.body, [
      { tenantId: 'sa-grand', totalUsers: 2, totalAccessAllowedUsers: 0 },
      { tenantId: 'sa-none', totalUsers: 0, totalAccessAllowedUsers: 0 },
      { tenantId: 'sa-root', totalUsers: 2, totalAccessAllowedUsers: 1 },
    ]);
  });
  test('a user token counts the accounts whose users it may read only; 1 to 100 ids', async () => {
    const own = await t.call('POST', C, { token: await rootToken(), body: { tenantIds: ['sa-root'] } });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body[0].totalUsers, 2);
    const other = await t.call('POST', C, { token: await rootToken(), body: { tenantIds: ['sa-root', 'sa-other'] } });
    fails(other, 403, 'GH-30005');
    fails(await t.call('POST', C, { token: await rootToken([]), body: { tenantIds: ['sa-root'] } }), 403, 'GH-20004');
    fails(await t.call('POST', C, { token: vendor, body: { tenantIds: [] } }), 400, 'GH-10001', /tenantIds/);
    fails(
      await t.call('POST', C, { token: vendor, body: { tenantIds: Array.from({ length: 101 }, (_, i) => `t${i}`) } }),
      400,
      'GH-10001',
      /tenantIds/,
    );
    fails(await t.call('POST', C, { token: vendor, body: {} }), 400, 'GH-10001', /tenantIds/);
  });
});
