import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const G = '/identity/resources/groups';
const ROLES_WRITE = 'b9ab741e-73a5-4018-9238-d8ca4a495e52'; // fe.secure.write.roles (seeded; not held by read-only)
const ids: Record<string, string> = {};
let auditorRole: string;
let betaRole: string;

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const as = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const call = (method: string, url: string, tenantId: string | undefined, body?: unknown) =>
  t.call(method, url, { token: vendor, body, headers: tenantId ? as(tenantId) : {} });
const login = (email: string) =>
  t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password: PASSWORD } });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'g-acme' });
  await account(t, { id: 'g-beta' });
  ids.ada = (await user(t, 'g-acme', { email: 'ada@acme.test' })).id; // first user: admin
  ids.bob = (await user(t, 'g-acme', { email: 'bob@acme.test' })).id; // read-only
  ids.cy = (await user(t, 'g-acme', { email: 'cy@acme.test' })).id;
  ids.carl = (await user(t, 'g-beta', { email: 'carl@beta.test' })).id;
  const role = await t.call('POST', '/identity/resources/roles/v1', {
    token: vendor,
    body: [{ key: 'auditor', name: 'Auditor', level: 5 }],
  });
  assert.equal(role.status, 201, JSON.stringify(role.body));
  auditorRole = role.body[0].id;
  const perms = await t.call('PUT', `/identity/resources/roles/v1/${auditorRole}/permissions`, {
    token: vendor,
    body: { permissionIds: [ROLES_WRITE] },
  });
  assert.equal(perms.status, 200, JSON.stringify(perms.body));
  const beta = await call('POST', '/identity/resources/roles/v1', 'g-beta', [
    { key: 'beta-only', name: 'Beta only', level: 5 },
  ]);
  assert.equal(beta.status, 201);
  betaRole = beta.body[0].id;
});
after(async () => t?.close());

describe('groups: create, read, update, delete', () => {
  let eng: any;

  test('create answers the whole record; the name is unique in the account, case-insensitively (409)', async () => {
    const r = await call('POST', `${G}/v1`, 'g-acme', {
      name: ' Engineering ',
      color: '#3366ff',
      description: 'Builders',
      metadata: '{"floor":3}',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    eng = r.body;
    assert.equal(eng.name, 'Engineering');
    assert.equal(eng.color, '#3366ff');
    assert.equal(eng.metadata, '{"floor":3}');
    assert.equal(eng.managedBy, 'gatehouse');
    assert.deepEqual(eng.roles, []);
    assert.deepEqual(eng.users, []);
    assert.match(eng.createdAt, /^\d{4}-\d\d-\d\dT/);
    const dup = await call('POST', `${G}/v1`, 'g-acme', { name: 'ENGINEERING' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-65002');
    assert.match(dup.body.errors[0], /ENGINEERING.*already exists/);
    // The same name in another account is fine.
    assert.equal((await call('POST', `${G}/v1`, 'g-beta', { name: 'Engineering' })).status, 201);
  });

  test('bad input is a 400 naming the field and creates nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /name/],
      [{ name: '   ' }, /name must not be empty/],
      [{ name: 'x'.repeat(256) }, /name/],
      [{ name: 'Ops', metadata: 'not json' }, /metadata must be a JSON object/],
      [{ name: 'Ops', metadata: '[1]' }, /metadata must be a JSON object/],
      [{ name: 'Ops', color: 5 }, /color/],
    ];
    for (const [body, re] of cases) {
      const r = await call('POST', `${G}/v1`, 'g-acme', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0], re);
    }
    const list = await call('GET', `${G}/v1`, 'g-acme');
    assert.deepEqual(
      list.body.groups.map((g: any) => g.name),
      ['Engineering'],
    );
    const noHeader = await call('POST', `${G}/v1`, undefined, { name: 'Ops' });
    assert.equal(noHeader.status, 400);
    assert.equal(noHeader.body.errorCode, 'GH-20006');
    assert.equal((await call('POST', `${G}/v1`, 'g-nowhere', { name: 'Ops' })).status, 404);
  });

  test('read one, list (relations on request), page (v2) and bulkGet', async () => {
    await call('POST', `${G}/v1`, 'g-acme', { name: 'Design' });
    const one = await call('GET', `${G}/v1/${eng.id}`, 'g-acme');
    assert.equal(one.status, 200);
    assert.equal(one.body.name, 'Engineering');
    assert.equal(
      (await call('GET', `${G}/v1/${eng.id}`, 'g-beta')).status,
      404,
      "another account's group is not found",
    );
    assert.equal((await call('GET', `${G}/v1/not-a-uuid`, 'g-acme')).status, 404);
    const list = await call('GET', `${G}/v1`, 'g-acme');
    assert.deepEqual(
      list.body.groups.map((g: any) => g.name),
      ['Design', 'Engineering'],
    );
    const page = await call('GET', `${G}/v2?_limit=1&_offset=1&_sortBy=name&_order=ASC`, 'g-acme');
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.items.map((g: any) => g.name),
      ['Engineering'],
    );
    assert.deepEqual(page.body._metadata, { totalItems: 2, totalPages: 2 });
    assert.match(page.body._links.prev, /_offset=0/);
    assert.equal(page.body._links.next, '');
    const filtered = await call('GET', `${G}/v2?_filter=desi`, 'g-acme');
    assert.deepEqual(
      filtered.body.items.map((g: any) => g.name),
      ['Design'],
    );
    const bulk = await call('POST', `${G}/v1/bulkGet`, 'g-acme', {
      groupsIds: [eng.id, '00000000-0000-4000-8000-000000000000', 'junk'],
    });
    assert.equal(bulk.status, 201);
    assert.deepEqual(
      bulk.body.groups.map((g: any) => g.id),
      [eng.id],
    );
  });

  test('update renames (409 on a taken name), an empty update is a 400', async () => {
    const r = await call('PATCH', `${G}/v1/${eng.id}`, 'g-acme', { name: 'Eng', description: 'R&D' });
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'Eng');
    assert.equal(r.body.description, 'R&D');
    assert.equal(r.body.color, '#3366ff', 'fields left out keep their value');
    const taken = await call('PATCH', `${G}/v1/${eng.id}`, 'g-acme', { name: 'design' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.errorCode, 'GH-65002');
    assert.equal((await call('PATCH', `${G}/v1/${eng.id}`, 'g-acme', {})).status, 400);
    assert.equal((await call('PATCH', `${G}/v1/${eng.id}`, 'g-beta', { name: 'x' })).status, 404);
  });

  test('members: users of the account only; a user of another account is a 400 naming them, nothing is added', async () => {
    const mixed = await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', { userIds: [ids.bob, ids.carl] });
    assert.equal(mixed.status, 400);
    assert.equal(mixed.body.errorCode, 'GH-65003');
    assert.match(mixed.body.errors[0], new RegExp(`${ids.carl}.*not members of account g-acme`));
    assert.deepEqual(mixed.body.context.userIds, [ids.carl]);
    assert.equal((await call('GET', `${G}/v1/${eng.id}`, 'g-acme')).body.users.length, 0, 'nothing added');
    const unknown = await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', {
      userIds: ['00000000-0000-4000-8000-000000000000'],
    });
    assert.equal(unknown.status, 400);

    const ok = await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', { userIds: [ids.bob, ids.cy] });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(
      ok.body.users.map((u: any) => u.email),
      ['bob@acme.test', 'cy@acme.test'],
    );
    const again = await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', { userIds: [ids.bob] });
    assert.equal(again.status, 201, 'adding a member twice is harmless');
    assert.equal(again.body.users.length, 2);
    const withUsers = await call('GET', `${G}/v1?_groupsRelations=users`, 'g-acme');
    const e = withUsers.body.groups.find((g: any) => g.id === eng.id);
    assert.equal(e.users.length, 2);
    assert.deepEqual(e.roles, [], 'roles only when asked');
  });

  test("roles: environment roles or the account's; members receive them in their tokens; removal takes them away", async () => {
    const foreign = await call('POST', `${G}/v1/${eng.id}/roles`, 'g-acme', { roleIds: [betaRole] });
    assert.equal(foreign.status, 400);
    assert.match(foreign.body.errors[0], new RegExp(betaRole));
    const before = claims((await login('bob@acme.test')).body.accessToken);
    assert.deepEqual(before.roles, ['read-only']);
    assert.ok(!before.permissions.includes('fe.secure.write.roles'));

    const r = await call('POST', `${G}/v1/${eng.id}/roles`, 'g-acme', { roleIds: [auditorRole] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.roles.map((x: any) => x.key),
      ['auditor'],
    );
    const signedIn = await login('bob@acme.test');
    const c = claims(signedIn.body.accessToken);
    assert.deepEqual([...c.roles].sort(), ['auditor', 'read-only']);
    assert.ok(c.permissions.includes('fe.secure.write.roles'));
    // Not a member: no group roles.
    assert.deepEqual(claims((await login('ada@acme.test')).body.accessToken).roles, ['admin']);

    // The environment switch: rolesEnabled false stops groups giving roles (and adding roles is refused).
    assert.equal(
      (await t.call('POST', `${G}/v1/config`, { token: vendor, body: { rolesEnabled: false } })).status,
      201,
    );
    const refreshed = await t.call('POST', '/identity/resources/auth/v1/user/token/refresh', {
      body: { refreshToken: signedIn.body.refreshToken },
    });
    assert.deepEqual(claims(refreshed.body.accessToken).roles, ['read-only']);
    const refused = await call('POST', `${G}/v1/${eng.id}/roles`, 'g-acme', { roleIds: [auditorRole] });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errorCode, 'GH-65004');
    assert.equal((await t.call('POST', `${G}/v1/config`, { token: vendor, body: { rolesEnabled: true } })).status, 201);
    assert.deepEqual((await t.call('GET', `${G}/v1/config`, { token: vendor })).body, {
      enabled: true,
      rolesEnabled: true,
    });

    const removed = await call('DELETE', `${G}/v1/${eng.id}/roles`, 'g-acme', { roleIds: [auditorRole] });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.roles, []);
    assert.deepEqual(claims((await login('bob@acme.test')).body.accessToken).roles, ['read-only']);
    await call('POST', `${G}/v1/${eng.id}/roles`, 'g-acme', { roleIds: [auditorRole] });
  });

  test("the User record lists the user's groups in its account; the users list reads them too", async () => {
    const bob = await call('GET', `/identity/resources/users/v1/${ids.bob}`, 'g-acme');
    assert.equal(bob.status, 200);
    assert.deepEqual(
      bob.body.groups.map((g: any) => g.name),
      ['Eng'],
    );
    assert.deepEqual(Object.keys(bob.body.groups[0]).sort(), [
      'color',
      'createdAt',
      'description',
      'id',
      'managedBy',
      'metadata',
      'name',
      'updatedAt',
    ]);
    const list = await call('GET', '/identity/resources/users/v2', 'g-acme');
    assert.equal(list.status, 200);
    const byEmail = Object.fromEntries(list.body.items.map((u: any) => [u.email, u.groups.map((g: any) => g.name)]));
    assert.deepEqual(byEmail, { 'ada@acme.test': [], 'bob@acme.test': ['Eng'], 'cy@acme.test': ['Eng'] });
  });

  test('user tokens: users permissions, always their own account', async () => {
    const reader = await t.userToken({ tenantId: 'g-acme', sub: ids.bob, permissions: ['fe.secure.read.users'] });
    const list = await t.call('GET', `${G}/v1`, { token: reader, headers: as('g-beta') });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.groups.map((g: any) => g.name),
      ['Design', 'Eng'],
      'the header is ignored for user tokens',
    );
    const denied = await t.call('POST', `${G}/v1`, { token: reader, body: { name: 'Nope' } });
    assert.equal(denied.status, 403);
    const writer = await t.userToken({ tenantId: 'g-acme', sub: ids.ada, permissions: ['fe.secure.*'] });
    const made = await t.call('POST', `${G}/v1`, { token: writer, body: { name: 'Support' } });
    assert.equal(made.status, 201);
    // The configuration is read for display; only the environment changes it.
    assert.equal((await t.call('GET', `${G}/v1/config`, { token: reader })).status, 200);
    assert.equal((await t.call('POST', `${G}/v1/config`, { token: writer, body: { enabled: false } })).status, 403);
  });

  test('removing members; leaving the account or being deleted leaves the group', async () => {
    const r = await call('DELETE', `${G}/v1/${eng.id}/users`, 'g-acme', {
      userIds: [ids.cy, '00000000-0000-4000-8000-000000000000'],
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.users.map((u: any) => u.email),
      ['bob@acme.test'],
    );
    // bob leaves the account and comes back: not a member of the group any more.
    await call('POST', `/identity/resources/users/v1/${ids.bob}/tenant`, undefined, { tenantId: 'g-beta' });
    assert.equal((await call('DELETE', `/identity/resources/users/v1/${ids.bob}`, 'g-acme')).status, 200);
    assert.deepEqual((await call('GET', `${G}/v1/${eng.id}`, 'g-acme')).body.users, []);
    await call('POST', `/identity/resources/users/v1/${ids.bob}/tenant`, undefined, { tenantId: 'g-acme' });
    assert.deepEqual((await call('GET', `${G}/v1/${eng.id}`, 'g-acme')).body.users, []);
    // cy joins again and is deleted: gone from the group.
    await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', { userIds: [ids.cy] });
    assert.equal((await call('DELETE', `/identity/resources/users/v1/${ids.cy}`, undefined)).status, 200);
    assert.deepEqual((await call('GET', `${G}/v1/${eng.id}`, 'g-acme')).body.users, []);
  });

  test('delete a group; its members keep their own roles', async () => {
    await call('POST', `${G}/v1/${eng.id}/users`, 'g-acme', { userIds: [ids.bob] });
    const d = await call('DELETE', `${G}/v1/${eng.id}`, 'g-acme');
    assert.equal(d.status, 200);
    assert.equal((await call('GET', `${G}/v1/${eng.id}`, 'g-acme')).status, 404);
    assert.equal((await call('DELETE', `${G}/v1/${eng.id}`, 'g-acme')).status, 404);
    assert.deepEqual(claims((await login('bob@acme.test')).body.accessToken).roles, ['read-only']);
  });

  test('groups switched off: changes are refused (403), reads work', async () => {
    assert.equal((await t.call('POST', `${G}/v1/config`, { token: vendor, body: { enabled: false } })).status, 201);
    const r = await call('POST', `${G}/v1`, 'g-acme', { name: 'Later' });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-65004');
    assert.equal((await call('GET', `${G}/v1`, 'g-acme')).status, 200);
    await t.call('POST', `${G}/v1/config`, { token: vendor, body: { enabled: true } });
  });

  test('removing the account removes its groups; a reactivated id starts without them', async () => {
    await account(t, { id: 'g-doomed' });
    const u = (await user(t, 'g-doomed', { email: 'dee@doomed.test' })).id;
    const g = await call('POST', `${G}/v1`, 'g-doomed', { name: 'Temp' });
    await call('POST', `${G}/v1/${g.body.id}/users`, 'g-doomed', { userIds: [u] });
    assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/g-doomed', { token: vendor })).status, 200);
    await account(t, { id: 'g-doomed' });
    assert.deepEqual((await call('GET', `${G}/v1`, 'g-doomed')).body.groups, []);
  });
});
