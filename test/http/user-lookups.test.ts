import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type Reply, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

/**
 * Lookups about users: their roles and groups per account (GET /identity/resources/users/v3/roles|groups)
 * and the signed-in user's accounts with their hierarchy (user token, GET /identity/resources/users/v2/me/hierarchy).
 */
let t: TestApp;
let vendor: string;
const ROLES = '/identity/resources/users/v3/roles';
const GROUPS = '/identity/resources/users/v3/groups';
const ME = '/identity/resources/users/v2/me/hierarchy';
const NOBODY = '00000000-0000-4000-8000-000000000000';

const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const qs = (ids: string[]) => ids.map((id) => `ids=${encodeURIComponent(id)}`).join('&');
const get = (url: string, tenantId?: string, token = vendor) =>
  t.call('GET', url, { token, headers: tenantId ? hdr(tenantId) : {} });

function fails(r: Reply, status: number, errorCode: string, message?: RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, errorCode);
  assert.ok(Array.isArray(r.body.errors) && r.body.errors.length > 0);
  if (message) assert.match(r.body.errors.join(' '), message);
}
async function ok(method: string, url: string, body?: unknown, tenantId?: string, status = 200) {
  const r = await t.call(method, url, { token: vendor, body, headers: tenantId ? hdr(tenantId) : {} });
  assert.equal(r.status, status, `${method} ${url}: ${JSON.stringify(r.body)}`);
  return r.body;
}
const subAccount = (tenantId: string, parentTenantId: string, name = tenantId) =>
  ok('POST', '/tenants/resources/sub-tenants/v1', { tenantId, name, parentTenantId }, undefined, 201);
const join = (userId: string, tenantId: string) =>
  ok('POST', `/identity/resources/users/v1/${userId}/tenant`, { tenantId }, undefined, 201);

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

describe('roles and groups of users', () => {
  const u: Record<string, string> = {};
  const role: Record<string, any> = {};
  const group: Record<string, string> = {};

  before(async () => {
    await account(t, { id: 'ul-acme' });
    await account(t, { id: 'ul-beta' });
    await account(t, { id: 'ul-empty' });
    [role.viewer] = await ok(
      'POST',
      '/identity/resources/roles/v1',
      [{ key: 'ul-viewer', name: 'Viewer', level: 7 }],
      undefined,
      201,
    );
    [role.acmeOps] = await ok(
      'POST',
      '/identity/resources/roles/v1',
      [{ key: 'ul-ops', name: 'Ops', level: 3 }],
      'ul-acme',
      201,
    );
    [role.betaLead] = await ok(
      'POST',
      '/identity/resources/roles/v1',
      [{ key: 'ul-lead', name: 'Lead', level: 2 }],
      'ul-beta',
      201,
    );
    u.carol = (
      await user(t, 'ul-acme', { email: 'carol@ul.test', password: null, roleIds: [role.viewer.id, role.acmeOps.id] })
    ).id;
    u.dave = (await user(t, 'ul-acme', { email: 'dave@ul.test', password: null, roleIds: [role.viewer.id] })).id;
    u.erin = (await user(t, 'ul-beta', { email: 'erin@ul.test', password: null, roleIds: [role.betaLead.id] })).id;
    await join(u.carol, 'ul-beta'); // default roles of ul-beta
    await ok('POST', `/identity/resources/users/v1/${u.carol}/roles`, { roleIds: [role.betaLead.id] }, 'ul-beta', 201);
    group.ops = (await ok('POST', '/identity/resources/groups/v1', { name: 'Ops team' }, 'ul-acme', 201)).id;
    group.alpha = (await ok('POST', '/identity/resources/groups/v1', { name: 'alpha squad' }, 'ul-acme', 201)).id;
    group.beta = (
      await ok('POST', '/identity/resources/groups/v1', { name: 'Beta team', color: '#123456' }, 'ul-beta', 201)
    ).id;
    await ok(
      'POST',
      `/identity/resources/groups/v1/${group.ops}/users`,
      { userIds: [u.carol, u.dave] },
      'ul-acme',
      201,
    );
    await ok('POST', `/identity/resources/groups/v1/${group.alpha}/users`, { userIds: [u.carol] }, 'ul-acme', 201);
    await ok('POST', `/identity/resources/groups/v1/${group.beta}/users`, { userIds: [u.carol] }, 'ul-beta', 201);
    // A group role reaches dave's token, but it is not assigned to him: the roles lookup leaves it out.
    await ok(
      'POST',
      `/identity/resources/groups/v1/${group.ops}/roles`,
      { roleIds: [role.acmeOps.id] },
      'ul-acme',
      201,
    );
  });

  test("roles with the tenant header: each user's roles in that account, in the order of ids; others absent", async () => {
    const r = await get(`${ROLES}?${qs([u.dave, NOBODY, u.carol, u.erin])}`, 'ul-acme');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // The browser SDK's GetUserRolesResponse[]: a bare array of {vendorId, tenantId, userId, roleIds}.
    const env = t.ctx.environment.id;
    assert.deepEqual(r.body, [
      { vendorId: env, tenantId: 'ul-acme', userId: u.dave, roleIds: [role.viewer.id] },
      // In level then key order.
      { vendorId: env, tenantId: 'ul-acme', userId: u.carol, roleIds: [role.acmeOps.id, role.viewer.id] },
    ]);
    const beta = await get(`${ROLES}?${qs([u.carol, u.dave])}`, 'ul-beta');
    assert.deepEqual(
      beta.body.map((e: any) => e.userId),
      [u.carol],
    );
    assert.ok(beta.body[0].roleIds.includes(role.betaLead.id));
    assert.ok(!beta.body[0].roleIds.includes(role.acmeOps.id));
    // An account with no such members: an empty list.
    assert.deepEqual((await get(`${ROLES}?${qs([u.carol])}`, 'ul-empty')).body, []);
  });

  test('roles without the header: one entry per account each user belongs to, as the user record lists them', async () => {
    const r = await get(`${ROLES}?${qs([u.carol, u.erin])}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((e: any) => [e.userId, e.tenantId]),
      [
        [u.carol, 'ul-acme'],
        [u.carol, 'ul-beta'],
        [u.erin, 'ul-beta'],
      ],
    );
    for (const id of [u.carol, u.erin]) {
      const record = await ok('GET', `/identity/resources/vendor-only/users/v1/${id}`);
      const mine = r.body.filter((e: any) => e.userId === id);
      const idsOf = (m: any) => m.roles.map((x: { id: string }) => x.id).sort();
      assert.deepEqual(
        mine.map((e: any) => [e.tenantId, [...e.roleIds].sort()]),
        record.tenants.map((m: any) => [m.tenantId, idsOf(m)]),
      );
    }
    // Upper-case and repeated ids name the same user once; the /frontegg alias and its header work alike.
    const again = await t.call('GET', `/frontegg${ROLES}?${qs([u.dave.toUpperCase(), u.dave])}`, {
      token: vendor,
      headers: { 'frontegg-tenant-id': 'ul-acme' },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(
      again.body.map((e: any) => e.userId),
      [u.dave],
    );
    assert.deepEqual(
      again.body[0].roleIds,
      [role.viewer.id],
      'a role received through a group is not an assigned role',
    );
    // Comma-joined ids (the browser SDK's form), also mixed with a repeated parameter.
    const joined = await get(`${ROLES}?ids=${u.erin},${u.carol}&ids=${u.dave}`, 'ul-acme');
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.deepEqual(
      joined.body.map((e: any) => e.userId),
      [u.carol, u.dave],
    );
  });

  test("groups with the tenant header: the user record's group form, by name; members without groups have an empty list", async () => {
    const r = await get(`${GROUPS}?${qs([u.carol, u.erin, u.dave])}`, 'ul-acme');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // The browser SDK's GetUserGroupsResponse[]: {vendorId, tenantId, userId, groupIds}, groups by name.
    const env = t.ctx.environment.id;
    assert.deepEqual(r.body, [
      { vendorId: env, tenantId: 'ul-acme', userId: u.carol, groupIds: [group.alpha, group.ops] },
      { vendorId: env, tenantId: 'ul-acme', userId: u.dave, groupIds: [group.ops] },
    ]);
    const record = await ok('GET', `/identity/resources/users/v1/${u.dave}`, undefined, 'ul-acme');
    assert.deepEqual(
      r.body[1].groupIds,
      record.groups.map((g: { id: string }) => g.id),
    );
    await ok('POST', `/identity/resources/groups/v1/${group.beta}/users`, { userIds: [u.erin] }, 'ul-beta', 201);
    await ok('DELETE', `/identity/resources/groups/v1/${group.beta}/users`, { userIds: [u.erin] }, 'ul-beta');
    const noGroups = await get(`${GROUPS}?${qs([u.erin])}`, 'ul-beta');
    assert.deepEqual(noGroups.body, [{ vendorId: env, userId: u.erin, tenantId: 'ul-beta', groupIds: [] }]);
  });

  test('groups without the header: every account each user belongs to', async () => {
    const r = await get(`${GROUPS}?${qs([u.erin, u.carol, NOBODY])}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((e: any) => [e.userId, e.tenantId, e.groupIds]),
      [
        [u.erin, 'ul-beta', []],
        [u.carol, 'ul-acme', [group.alpha, group.ops]],
        [u.carol, 'ul-beta', [group.beta]],
      ],
    );
    const joined = await get(`${GROUPS}?ids=${u.dave},${u.carol}`, 'ul-acme');
    assert.deepEqual(
      joined.body.map((e: any) => e.userId),
      [u.dave, u.carol],
    );
  });

  test('bad input is a 400 naming ids and the rule; an unknown account in the header is a 404', async () => {
    const tooMany = Array.from({ length: 101 }, () => randomUUID());
    for (const path of [ROLES, GROUPS]) {
      fails(await get(path, 'ul-acme'), 400, 'GH-10001', /querystring\.ids is required/);
      fails(await get(`${path}?ids=`, 'ul-acme'), 400, 'GH-10001', /querystring\.ids must name at least one user id/);
      fails(await get(`${path}?ids=,`, 'ul-acme'), 400, 'GH-10001', /querystring\.ids must name at least one user id/);
      fails(
        await get(`${path}?${qs([u.carol, 'not-a-uuid'])}`, 'ul-acme'),
        400,
        'GH-10001',
        /querystring\.ids\.1 must be a uuid/,
      );
      fails(await get(`${path}?ids=${u.carol},nope`, 'ul-acme'), 400, 'GH-10001', /querystring\.ids\.1 must be a uuid/);
      fails(await get(`${path}?${qs(tooMany)}`, 'ul-acme'), 400, 'GH-10001', /querystring\.ids: at most 100 ids/);
      fails(
        await get(`${path}?ids=${tooMany.join(',')}`, 'ul-acme'),
        400,
        'GH-10001',
        /querystring\.ids: at most 100 ids/,
      );
      fails(await get(`${path}?${qs([u.carol])}`, 'ul-nowhere'), 404, 'GH-30001', /gatehouse-tenant-id ul-nowhere/);
      // The limit itself is fine.
      const hundred = await get(`${path}?${qs([...tooMany.slice(0, 99), u.dave])}`, 'ul-acme');
      assert.equal(hundred.status, 200);
      assert.deepEqual(
        hundred.body.map((e: any) => e.userId),
        [u.dave],
      );
    }
  });

  test("a user token with fe.secure.read.users sees its own account's members only, whatever the header", async () => {
    const admin = await t.userToken({ sub: u.carol, tenantId: 'ul-acme', permissions: ['fe.secure.read.users'] });
    for (const path of [ROLES, GROUPS]) {
      for (const header of [undefined, 'ul-beta']) {
        const r = await get(`${path}?${qs([u.erin, u.dave, u.carol])}`, header, admin);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual(
          r.body.map((e: any) => [e.userId, e.tenantId]),
          [
            [u.dave, 'ul-acme'],
            [u.carol, 'ul-acme'],
          ],
        );
      }
    }
    const roles = await get(`${ROLES}?${qs([u.carol])}`, undefined, admin);
    assert.deepEqual(roles.body[0].roleIds, [role.acmeOps.id, role.viewer.id]);
  });

  test('a user token without fe.secure.read.users is refused (403), no token is a 401', async () => {
    const member = await t.userToken({ sub: u.dave, tenantId: 'ul-acme', permissions: ['fe.secure.read.roles'] });
    for (const path of [ROLES, GROUPS]) {
      fails(await get(`${path}?${qs([u.carol])}`, undefined, member), 403, 'GH-20004', /fe\.secure\.read\.users/);
      fails(await t.call('GET', `${path}?${qs([u.carol])}`), 401, 'GH-20001');
    }
  });
});

describe('my accounts with their hierarchy (user token)', () => {
  const u: Record<string, string> = {};
  const me = async (userId: string, tenantId: string) => {
    const r = await get(ME, undefined, await t.userToken({ sub: userId, tenantId }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  /** Every tenant id of a forest, depth first. */
  const idsOf = (nodes: any[]): string[] => nodes.flatMap((n) => [n.tenantId, ...idsOf(n.children)]);
  const node = (
    tenantId: string,
    tenantName: string,
    parentTenantId: string | null,
    member: boolean,
    children: unknown[] = [],
  ) => ({ tenantId, tenantName, parentTenantId, member, children });

  before(async () => {
    //  uh-root ─┬─ uh-a (ada, sub-account access) ─┬─ uh-a1 ── uh-a1x
    //           │                                  └─ uh-a2 (ada, no sub-account access) ── uh-a2x
    //           └─ uh-b (bob) ── uh-b1
    //  uh-solo (ada)      uh-other ── uh-other1
    await account(t, { id: 'uh-root', name: 'Root' });
    await subAccount('uh-a', 'uh-root', 'Alpha');
    await subAccount('uh-a1', 'uh-a', 'A one');
    await subAccount('uh-a1x', 'uh-a1', 'A one x');
    await subAccount('uh-a2', 'uh-a', 'A two');
    await subAccount('uh-a2x', 'uh-a2', 'A two x');
    await subAccount('uh-b', 'uh-root', 'Beta');
    await subAccount('uh-b1', 'uh-b', 'Beta one');
    await account(t, { id: 'uh-solo', name: 'Solo' });
    await account(t, { id: 'uh-other', name: 'Other' });
    await subAccount('uh-other1', 'uh-other', 'Other one');
    u.ada = (await user(t, 'uh-a', { email: 'ada@uh.test', password: null })).id;
    await join(u.ada, 'uh-a2');
    await join(u.ada, 'uh-solo');
    await ok('PUT', `/identity/resources/sub-tenants/users/v1/${u.ada}/access`, { allowAccess: true }, 'uh-a');
    u.bob = (await user(t, 'uh-b', { email: 'bob@uh.test', password: null })).id;
    u.otto = (await user(t, 'uh-other', { email: 'otto@uh.test', password: null })).id;
  });

  test('the accounts I belong to, with the sub-accounts my memberships open, as trees by name', async () => {
    assert.deepEqual(await me(u.ada, 'uh-a'), {
      tenants: [
        node('uh-a', 'Alpha', 'uh-root', true, [
          node('uh-a1', 'A one', 'uh-a', false, [node('uh-a1x', 'A one x', 'uh-a1', false)]),
          // ada's own membership of uh-a2 governs its subtree: no sub-account access there, so uh-a2x is closed.
          node('uh-a2', 'A two', 'uh-a', true),
        ]),
        node('uh-solo', 'Solo', null, true),
      ],
    });
  });

  test("isolation: only the caller's memberships count, whatever account the token names", async () => {
    const ada = idsOf((await me(u.ada, 'uh-solo')).tenants);
    for (const foreign of ['uh-root', 'uh-b', 'uh-b1', 'uh-other', 'uh-other1', 'uh-a2x'])
      assert.ok(!ada.includes(foreign), foreign);
    // bob's token, even one naming ada's account, shows bob's account only; its sub-account stays closed (defaultOff).
    for (const tenantId of ['uh-b', 'uh-a'])
      assert.deepEqual(await me(u.bob, tenantId), { tenants: [node('uh-b', 'Beta', 'uh-root', true)] });
    assert.deepEqual(idsOf((await me(u.otto, 'uh-other')).tenants), ['uh-other']);
    // A token whose subject is no user (an account API token's id is not a uuid) belongs to no account.
    assert.deepEqual(await me('not-a-user', 'uh-a'), { tenants: [] });
  });

  test("the account's access type opens sub-accounts; a disabled membership opens none; removed accounts vanish", async () => {
    await ok('PUT', '/tenants/resources/sub-tenants/v1/uh-b/hierarchy-settings', { subAccountAccessType: 'alwaysOn' });
    assert.deepEqual(await me(u.bob, 'uh-b'), {
      tenants: [node('uh-b', 'Beta', 'uh-root', true, [node('uh-b1', 'Beta one', 'uh-b', false)])],
    });
    await ok('POST', `/identity/resources/tenants/users/v1/${u.bob}/disable`, undefined, 'uh-b');
    assert.deepEqual(await me(u.bob, 'uh-b'), { tenants: [node('uh-b', 'Beta', 'uh-root', true)] });
    // Removing uh-a1 moves uh-a1x up to uh-a.
    await ok('DELETE', '/tenants/resources/sub-tenants/v1/uh-a1');
    const alpha = (await me(u.ada, 'uh-a')).tenants[0];
    assert.deepEqual(
      alpha.children.map((n: any) => [n.tenantId, n.parentTenantId]),
      [
        ['uh-a1x', 'uh-a'],
        ['uh-a2', 'uh-a'],
      ],
    );
  });

  test('an environment token is refused (403), no token is a 401', async () => {
    fails(await get(ME, 'uh-a'), 403, 'GH-20003');
    fails(await t.call('GET', ME), 401, 'GH-20001');
  });
});
