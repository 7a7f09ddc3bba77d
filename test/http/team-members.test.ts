import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const M = '/team/resources/members/v1';
const U = '/identity/resources/users';
const ALL = ['fe.secure.read.users', 'fe.secure.write.users', 'fe.secure.delete.users'];
let roleIds: Record<string, string> = {};
let ann: any;
let ben: any;
let cat: any;

const fails = (r: { status: number; body: any }, status: number, code?: string, msg?: RegExp) => {
  assert.equal(r.status, status, JSON.stringify(r.body));
  if (code) assert.equal(r.body.errorCode, code);
  if (msg) assert.match(r.body.errors.join(' '), msg);
};
const inAcct = (tenantId: string) => ({ token: vendor, headers: { 'gatehouse-tenant-id': tenantId } });
// Ann is the account's first user, its admin: her token carries that role and its permissions (every fe.* one), as
// role changes are held to the caller's own roles.
const ADMIN = ['fe.*'];
const annToken = (permissions = ADMIN) =>
  t.userToken({ tenantId: 'tm-acme', sub: ann.id, permissions, roles: ['admin'] });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['tm-acme', 'tm-beta']) await account(t, { id });
  roleIds = Object.fromEntries(
    (await t.call('GET', '/identity/resources/roles/v1', { token: vendor })).body.map((r: any) => [r.key, r.id]),
  );
  ann = (await user(t, 'tm-acme', { email: 'ann@tm.test', password: PASSWORD })).body;
  ben = (await user(t, 'tm-acme', { email: 'ben@tm.test', password: null })).body;
  cat = (await user(t, 'tm-acme', { email: 'cat@tm.test', password: null })).body;
  await user(t, 'tm-beta', { email: 'dan@tm.test', password: null });
});
after(async () => t?.close());

describe('team members', () => {
  test("lists the members of the caller's account, paged (wire.md names and pageSize/pageOffset/filter)", async () => {
    const r = await t.call('GET', `${M}?_sortBy=email`, { token: await annToken() });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.items.map((u: any) => u.email),
      ['ann@tm.test', 'ben@tm.test', 'cat@tm.test'],
    );
    assert.equal(r.body.items[0].tenantId, 'tm-acme');
    const p = await t.call('GET', `${M}?pageSize=1&pageOffset=1&_sortBy=email`, inAcct('tm-acme'));
    assert.deepEqual(
      p.body.items.map((u: any) => u.email),
      ['ben@tm.test'],
    );
    assert.deepEqual(p.body._metadata, { totalItems: 3, totalPages: 3 });
    const f = await t.call('GET', `${M}?filter=cat`, inAcct('tm-acme'));
    assert.deepEqual(
      f.body.items.map((u: any) => u.email),
      ['cat@tm.test'],
    );
    const beta = await t.call('GET', M, {
      token: await t.userToken({ tenantId: 'tm-beta', sub: ann.id, permissions: ALL }),
    });
    assert.deepEqual(
      beta.body.items.map((u: any) => u.email),
      ['dan@tm.test'],
      'a user token sees its own account only',
    );
    fails(await t.call('GET', M, { token: vendor }), 400, 'GH-20006');
    fails(await t.call('GET', M, { token: await annToken([]) }), 403, 'GH-20004');
    fails(await t.call('GET', `${M}?pageSize=500`, inAcct('tm-acme')), 400, 'GH-10001', /pageSize/);
  });

  test("PUT sets a member's roles and answers the member", async () => {
    const u = await annToken();
    const r = await t.call('PUT', M, {
      token: u,
      body: { id: ben.id, roleIds: [roleIds.admin, roleIds['read-only']] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.id, ben.id);
    assert.deepEqual(r.body.roles.map((x: any) => x.key).sort(), ['admin', 'read-only']);
    const again = await t.call('PUT', M, { token: u, body: { id: ben.id, roleIds: [roleIds['read-only']] } });
    assert.deepEqual(
      again.body.roles.map((x: any) => x.key),
      ['read-only'],
    );
    // Bad input changes nothing.
    fails(
      await t.call('PUT', M, { token: u, body: { id: ben.id, roleIds: ['00000000-0000-4000-8000-000000000000'] } }),
      400,
      'GH-40007',
    );
    fails(await t.call('PUT', M, { token: u, body: { roleIds: [] } }), 400, 'GH-10001', /body\/?\.?id|id/);
    // roleIds left out (the browser SDK types the body Partial<ITeamUser>): roles unchanged, the member answered.
    const kept = await t.call('PUT', M, { token: u, body: { id: ben.id, name: 'ignored' } });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual(
      kept.body.roles.map((x: any) => x.key),
      ['read-only'],
    );
    const dan = (await t.call('GET', `${U}/v1/email?email=dan@tm.test`, { token: vendor })).body;
    fails(await t.call('PUT', M, { token: u, body: { id: dan.id, roleIds: [] } }), 404, 'GH-42005');
    assert.deepEqual(
      (await t.call('GET', `${U}/v1/${ben.id}`, inAcct('tm-acme'))).body.roles.map((x: any) => x.key),
      ['read-only'],
    );
    fails(
      await t.call('PUT', M, { token: await annToken(['fe.secure.read.users']), body: { id: ben.id, roleIds: [] } }),
      403,
      'GH-20004',
    );
  });

  test('DELETE removes a member from the account', async () => {
    const x = (await t.call('POST', `${U}/v1`, { ...inAcct('tm-acme'), body: { email: 'xan@tm.test' } })).body;
    await t.call('POST', `${U}/v1/${x.id}/tenant`, { token: vendor, body: { tenantId: 'tm-beta' } });
    const r = await t.call('DELETE', `${M}/${x.id}`, { token: await annToken() });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${x.id}`, { token: vendor })).body.tenantIds,
      ['tm-beta'],
    );
    fails(await t.call('DELETE', `${M}/${x.id}`, { token: await annToken() }), 404, 'GH-42005');
    fails(
      await t.call('DELETE', `${M}/${ben.id}`, { token: await annToken(['fe.secure.write.users']) }),
      403,
      'GH-20004',
    );
  });

  test('roles assignable in the account', async () => {
    const made = await t.call('POST', '/identity/resources/roles/v1', {
      ...inAcct('tm-beta'),
      body: [{ key: 'beta-only', name: 'Beta only', level: 5 }],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const r = await t.call('GET', '/team/resources/roles/v1', { token: await annToken() });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // A bare array: the browser SDK's loadAvailableRoles reads ITeamUserRole[].
    const keys = r.body.map((x: any) => x.key);
    assert.ok(keys.includes('admin') && keys.includes('read-only'));
    assert.ok(!keys.includes('beta-only'), "another account's roles are not offered");
    const b = await t.call('GET', '/team/resources/roles/v1', inAcct('tm-beta'));
    assert.ok(b.body.some((x: any) => x.key === 'beta-only'));
  });

  test('member statistics: total, activated (signed in), pending (never signed in), disabled', async () => {
    await signedIn(t, { email: 'ann@tm.test', password: PASSWORD });
    assert.equal(
      (await t.call('POST', `/identity/resources/tenants/users/v1/${cat.id}/disable`, inAcct('tm-acme'))).status,
      200,
    );
    const r = await t.call('GET', '/team/resources/stats/v1/members', { token: await annToken() });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      totalItems: 3,
      activatedItems: 1,
      pendingItems: 1,
      disabledItems: 1,
      addedThisWeek: 3,
      superAdmins: 0,
    });
    fails(await t.call('GET', '/team/resources/stats/v1/members', inAcct('tm-none')), 404, 'GH-30001');
  });

  test('resend activation email answers (route of the invitations module)', async () => {
    const r = await t.call('POST', `${M}/${ben.id}/resendActivationEmail`, { token: await annToken() });
    assert.notEqual(r.status, 404, JSON.stringify(r.body));
  });
});

describe('team profile image', () => {
  const I = '/team/resources/profile/me/image/v1';
  test("sets, replaces and removes the caller's picture URL", async () => {
    const u = await annToken();
    const r = await t.call('PUT', I, { token: u, body: { profilePictureUrl: 'https://cdn.tm.test/ann.png' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { profilePictureUrl: 'https://cdn.tm.test/ann.png' });
    assert.equal(
      (await t.call('GET', '/identity/resources/users/v2/me', { token: u })).body.profilePictureUrl,
      'https://cdn.tm.test/ann.png',
    );
    const alias = await t.call('PUT', I, { token: u, body: { profileImage: 'data:image/png;base64,iVBORw0KGgo=' } });
    assert.equal(alias.body.profilePictureUrl, 'data:image/png;base64,iVBORw0KGgo=');
    assert.equal((await t.call('PUT', I, { token: u, body: { profilePictureUrl: null } })).body.profilePictureUrl, '');
  });

  test('bad input is a 400 naming the field and changes nothing', async () => {
    const u = await annToken();
    await t.call('PUT', I, { token: u, body: { profilePictureUrl: 'https://cdn.tm.test/keep.png' } });
    fails(
      await t.call('PUT', I, { token: u, body: { profilePictureUrl: `https://cdn.tm.test/${'a'.repeat(4100)}` } }),
      400,
      'GH-10001',
      /profilePictureUrl/,
    );
    fails(
      await t.call('PUT', I, { token: u, body: { profilePictureUrl: 'javascript:alert(1)' } }),
      400,
      'GH-10001',
      /profilePictureUrl/,
    );
    fails(await t.call('PUT', I, { token: u, body: {} }), 400, 'GH-10001', /profilePictureUrl/);
    fails(
      await t.call('PUT', I, {
        token: u,
        body: { profilePictureUrl: 'https://a.test/1', profileImage: 'https://a.test/2' },
      }),
      400,
      'GH-10001',
      /differ/,
    );
    fails(await t.call('PUT', I, { token: vendor, body: { profilePictureUrl: 'https://a.test/1' } }), 403, 'GH-20003');
    assert.equal(
      (await t.call('GET', `${U}/v1/${ann.id}`, inAcct('tm-acme'))).body.profilePictureUrl,
      'https://cdn.tm.test/keep.png',
    );
  });
});
