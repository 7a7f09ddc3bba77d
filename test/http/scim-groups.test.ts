import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

let t: TestApp;
let vendor: string;
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
let conn: { id: string; token: string };
let other: { id: string; token: string };
let base: string;
const users: Record<string, string> = {};
let roleIds: Record<string, string> = {};

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['sg-acme', 'sg-beta'])
    assert.equal(
      (await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId: id, name: id } }))
        .status,
      201,
    );
  conn = (
    await t.call('POST', C, { token: vendor, headers: { 'gatehouse-tenant-id': 'sg-acme' }, body: { source: 'okta' } })
  ).body;
  other = (
    await t.call('POST', C, { token: vendor, headers: { 'gatehouse-tenant-id': 'sg-beta' }, body: { source: 'okta' } })
  ).body;
  base = `${S}/${conn.id}`;
  for (const n of ['ann', 'ben', 'cat']) {
    const r = await sc('POST', `${base}/Users`, { userName: `${n}@acme.test`, displayName: n.toUpperCase() });
    assert.equal(r.status, 201);
    users[n] = r.body.id;
  }
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  roleIds = Object.fromEntries(roles.body.map((r: any) => [r.key, r.id]));
});
after(async () => t?.close());

async function sc(
  method: string,
  url: string,
  body?: unknown,
  token = conn.token,
  headers: Record<string, string> = {},
) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json', ...headers },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}
const patchGroup = (id: string, ops: unknown[], headers: Record<string, string> = {}) =>
  sc('PATCH', `${base}/Groups/${id}`, { schemas: [PATCH], Operations: ops }, conn.token, headers);
const memberIds = (g: any) => (g.members ?? []).map((m: any) => m.value).sort();
const rolesOf = async (email: string) => {
  const r = await t.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent(email)}`, {
    token: vendor,
    headers: { 'gatehouse-tenant-id': 'sg-acme' },
  });
  return (r.body.items[0].roles as any[]).map((x) => x.key).sort();
};

describe('SCIM Groups', () => {
  let eng: string;
  test('POST with members (201), GET with members, the users show the group; event emitted', async () => {
    const r = await sc('POST', `${base}/Groups`, {
      schemas: [GROUP],
      displayName: 'Engineering',
      externalId: 'g-1',
      members: [{ value: users.ann }, { value: users.ben, display: 'Ben' }],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    eng = r.body.id;
    assert.equal(r.body.displayName, 'Engineering');
    assert.deepEqual(memberIds(r.body), [users.ann, users.ben].sort());
    assert.equal(r.body.members.find((m: any) => m.value === users.ann).display, 'ANN');
    assert.equal(r.headers.etag, r.body.meta.version);
    const u = await sc('GET', `${base}/Users/${users.ann}`);
    assert.deepEqual(
      u.body.groups.map((g: any) => g.display),
      ['Engineering'],
    );
    const ev = await t.db.query(
      `SELECT 1 FROM events WHERE event_key = 'scim.group_provisioned' AND data->>'groupId' = $1`,
      [eng],
    );
    assert.equal(ev.rows.length, 1);
    const noMembers = await sc('GET', `${base}/Groups/${eng}?excludedAttributes=members`);
    assert.equal(noMembers.body.members, undefined);
  });

  test('bad input: no displayName 400, duplicate displayName 409 uniqueness, unknown member 400 invalidValue', async () => {
    const a = await sc('POST', `${base}/Groups`, { schemas: [GROUP] });
    assert.equal(a.status, 400);
    assert.equal(a.body.scimType, 'invalidValue');
    const d = await sc('POST', `${base}/Groups`, { displayName: 'ENGINEERING' });
    assert.equal(d.status, 409);
    assert.equal(d.body.scimType, 'uniqueness');
    const m = await sc('POST', `${base}/Groups`, {
      displayName: 'Ghosts',
      members: [{ value: '00000000-0000-4000-8000-000000000000' }],
    });
    assert.equal(m.status, 400);
    assert.equal(m.body.scimType, 'invalidValue');
    assert.equal(
      (await sc('GET', `${base}/Groups?filter=${encodeURIComponent('displayName eq "Ghosts"')}`)).body.totalResults,
      0,
      'nothing was created',
    );
  });

  test('PATCH members: add, remove by value filter, remove by value list, replace; other attributes alongside', async () => {
    let r = await patchGroup(eng, [{ op: 'add', path: 'members', value: [{ value: users.cat }] }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(memberIds(r.body), [users.ann, users.ben, users.cat].sort());
    r = await patchGroup(eng, [{ op: 'remove', path: `members[value eq "${users.ann}"]` }]);
    assert.deepEqual(memberIds(r.body), [users.ben, users.cat].sort());
    r = await patchGroup(eng, [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: users.ben }] }]);
    assert.deepEqual(memberIds(r.body), [users.cat]);
    r = await patchGroup(eng, [
      { op: 'replace', path: 'members', value: [{ value: users.ann }, { value: users.ben }] },
      { op: 'replace', path: 'displayName', value: 'Engineers' },
    ]);
    assert.deepEqual(memberIds(r.body), [users.ann, users.ben].sort());
    assert.equal(r.body.displayName, 'Engineers');
    r = await patchGroup(eng, [{ op: 'replace', value: { displayName: 'Engineering', id: eng } }]);
    assert.equal(r.body.displayName, 'Engineering', 'read-only id in a value object is ignored');
    r = await patchGroup(eng, [{ op: 'remove', path: 'members' }]);
    assert.deepEqual(memberIds(r.body), []);
    await patchGroup(eng, [{ op: 'add', path: 'members', value: [{ value: users.ann }] }]);
    const bad = await patchGroup(eng, [
      { op: 'add', path: 'members', value: [{ value: '00000000-0000-4000-8000-000000000000' }] },
    ]);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.scimType, 'invalidValue');
    const badPath = await patchGroup(eng, [{ op: 'replace', path: 'owner', value: 'x' }]);
    assert.equal(badPath.status, 400);
    assert.equal(badPath.body.scimType, 'invalidPath');
  });

  test('ETag on groups: member changes bump the version; stale If-Match is 412', async () => {
    const cur = await sc('GET', `${base}/Groups/${eng}`);
    const r = await patchGroup(eng, [{ op: 'add', path: 'members', value: [{ value: users.cat }] }], {
      'if-match': cur.headers.etag as string,
    });
    assert.equal(r.status, 200);
    assert.notEqual(r.body.meta.version, cur.body.meta.version);
    const stale = await patchGroup(eng, [{ op: 'remove', path: 'members' }], {
      'if-match': cur.headers.etag as string,
    });
    assert.equal(stale.status, 412);
    assert.deepEqual(stale.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
    assert.equal(
      (await sc('DELETE', `${base}/Groups/${eng}`, undefined, conn.token, { 'if-match': 'W/"1"' })).status,
      412,
    );
  });

  test('list and filter groups: displayName, members.value, members[value eq ...], sort, excludedAttributes', async () => {
    await sc('POST', `${base}/Groups`, { displayName: 'Admins', members: [{ value: users.ben }] });
    const byName = await sc(
      'GET',
      `${base}/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}&excludedAttributes=members`,
    );
    assert.equal(byName.body.totalResults, 1);
    assert.equal(byName.body.Resources[0].members, undefined);
    const withBen = await sc('GET', `${base}/Groups?filter=${encodeURIComponent(`members.value eq "${users.ben}"`)}`);
    assert.deepEqual(
      withBen.body.Resources.map((g: any) => g.displayName),
      ['Admins'],
    );
    const withAnn = await sc(
      'GET',
      `${base}/Groups?filter=${encodeURIComponent(`members[value eq "${users.ann}"] and id eq "${eng}"`)}`,
    );
    assert.equal(withAnn.body.totalResults, 1);
    const sorted = await sc('GET', `${base}/Groups?sortBy=displayName`);
    assert.deepEqual(
      sorted.body.Resources.map((g: any) => g.displayName),
      ['Admins', 'Engineering'],
    );
    const users2 = await sc('GET', `${base}/Users?filter=${encodeURIComponent(`groups.value eq "${eng}"`)}`);
    assert.deepEqual(users2.body.Resources.map((u: any) => u.userName).sort(), ['ann@acme.test', 'cat@acme.test']);
    const search = await sc('POST', `${base}/Groups/.search`, { filter: 'displayName sw "adm"' });
    assert.equal(search.body.totalResults, 1);
  });

  test('PUT replaces name and members', async () => {
    const r = await sc('PUT', `${base}/Groups/${eng}`, {
      schemas: [GROUP],
      displayName: 'Engineering',
      members: [{ value: users.cat }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(memberIds(r.body), [users.cat]);
  });

  test('group-to-role mapping: members get the mapped roles, lose them when they leave or the mapping changes', async () => {
    const map = await t.call('PUT', `${C}/${conn.id}/group-mappings`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'sg-acme' },
      body: { mappings: [{ group: 'engineering', roleIds: [roleIds.admin] }] },
    });
    assert.equal(map.status, 200, JSON.stringify(map.body));
    assert.deepEqual(
      (
        await t.call('GET', `${C}/${conn.id}/group-mappings`, {
          token: vendor,
          headers: { 'gatehouse-tenant-id': 'sg-acme' },
        })
      ).body,
      map.body,
    );
    assert.ok(
      (await rolesOf('cat@acme.test')).includes('admin'),
      'existing member got the role when the mapping was set',
    );
    assert.ok(!(await rolesOf('ann@acme.test')).includes('admin'));
    await patchGroup(eng, [{ op: 'add', path: 'members', value: [{ value: users.ann }] }]);
    assert.ok((await rolesOf('ann@acme.test')).includes('admin'));
    await patchGroup(eng, [{ op: 'remove', path: `members[value eq "${users.ann}"]` }]);
    assert.ok(!(await rolesOf('ann@acme.test')).includes('admin'));
    // Renaming the group out of the mapping takes the role away.
    await patchGroup(eng, [{ op: 'replace', path: 'displayName', value: 'Eng (old)' }]);
    assert.ok(!(await rolesOf('cat@acme.test')).includes('admin'));
    await patchGroup(eng, [{ op: 'replace', path: 'displayName', value: 'Engineering' }]);
    assert.ok((await rolesOf('cat@acme.test')).includes('admin'));
    // Deleting the group takes it away too.
    const d = await sc('DELETE', `${base}/Groups/${eng}`);
    assert.equal(d.status, 204);
    assert.ok(!(await rolesOf('cat@acme.test')).includes('admin'));
    const badRole = await t.call('PUT', `${C}/${conn.id}/group-mappings`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'sg-acme' },
      body: { mappings: [{ group: 'x', roleIds: ['00000000-0000-4000-8000-000000000000'] }] },
    });
    assert.equal(badRole.status, 400);
  });

  test("isolation: another account's connection cannot see or use these groups or users as members", async () => {
    const mine = await sc('POST', `${base}/Groups`, { displayName: 'Private' });
    assert.equal((await sc('GET', `${S}/${other.id}/Groups/${mine.body.id}`, undefined, other.token)).status, 404);
    assert.equal(
      (
        await sc(
          'PATCH',
          `${S}/${other.id}/Groups/${mine.body.id}`,
          { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] },
          other.token,
        )
      ).status,
      404,
    );
    const steal = await sc(
      'POST',
      `${S}/${other.id}/Groups`,
      { displayName: 'Thieves', members: [{ value: users.ann }] },
      other.token,
    );
    assert.equal(steal.status, 400);
    assert.equal(steal.body.scimType, 'invalidValue');
    const list = await sc('GET', `${S}/${other.id}/Groups`, undefined, other.token);
    assert.equal(list.body.totalResults, 0);
  });
});
