import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * The requests Okta and Microsoft Entra ID send during a full cycle (provision, update, deactivate, group push),
 * written as their provisioning documentation shows them (Okta "SCIM 2.0" reference; Microsoft "Tutorial: develop
 * a SCIM endpoint" request/response examples), quirks included.
 */

let t: TestApp;
let vendor: string;
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENT = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['oe-okta', 'oe-entra']) await account(t, { id });
});
after(async () => t?.close());

function client(conn: { id: string; token: string }, userAgent: string, contentType: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await t.app.inject({
      method: method as 'GET',
      url: `${S}/${conn.id}${path}`,
      headers: {
        authorization: `Bearer ${conn.token}`,
        'user-agent': userAgent,
        accept: 'application/scim+json',
        ...(body !== undefined ? { 'content-type': contentType } : {}),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = res.body ? JSON.parse(res.body) : undefined;
    return { status: res.statusCode, body: parsed, headers: res.headers };
  };
}

async function ghUser(tenantId: string, email: string) {
  const r = await t.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent(email)}`, {
    token: vendor,
    headers: { 'gatehouse-tenant-id': tenantId },
  });
  return r.body.items[0];
}

async function mapGroup(tenantId: string, connId: string, group: string) {
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  const admin = roles.body.find((r: any) => r.key === 'admin').id;
  const r = await t.call('PUT', `${C}/${connId}/group-mappings`, {
    token: vendor,
    headers: { 'gatehouse-tenant-id': tenantId },
    body: { mappings: [{ group, roleIds: [admin] }] },
  });
  assert.equal(r.status, 200);
}

describe('Okta: provision, update, deactivate, group push', () => {
  test('the whole cycle', async () => {
    const conn = (
      await t.call('POST', C, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'oe-okta' },
        body: { source: 'okta', connectionName: 'Okta', syncToUserManagement: true },
      })
    ).body;
    await mapGroup('oe-okta', conn.id, 'Okta Admins');
    const okta = client(conn, 'Okta SCIM Client 1.0.0', 'application/scim+json; charset=utf-8');

    // Connection test when the integration is saved.
    let r = await okta('GET', '/Users?startIndex=1&count=2');
    assert.equal(r.status, 200);
    assert.equal(r.body.totalResults, 0);
    r = await okta('GET', '/Groups?startIndex=1&count=100');
    assert.equal(r.status, 200);

    // Assign: look the user up by userName first, then create.
    r = await okta(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "test.user@okta.local"')}&startIndex=1&count=100`,
    );
    assert.equal(r.body.totalResults, 0);
    assert.deepEqual(r.body.Resources, []);
    r = await okta('POST', '/Users', {
      schemas: [USER],
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const id = r.body.id;
    assert.equal(r.body.externalId, '00ujl29u0le5T6Aj10h7');
    const gh = await ghUser('oe-okta', 'test.user@okta.local');
    assert.equal(gh.managedBy, 'scim2');
    // A second lookup now finds it.
    r = await okta(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "test.user@okta.local"')}&startIndex=1&count=100`,
    );
    assert.equal(r.body.totalResults, 1);
    assert.equal(r.body.Resources[0].id, id);
    r = await okta('GET', `/Users/${id}`);
    assert.equal(r.status, 200);

    // Profile update: Okta PUTs the whole user.
    r = await okta('PUT', `/Users/${id}`, {
      schemas: [USER],
      id,
      userName: 'test.user@okta.local',
      name: { givenName: 'Another', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Another User',
      active: true,
      meta: { resourceType: 'User' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name.givenName, 'Another');
    assert.equal((await ghUser('oe-okta', 'test.user@okta.local')).name, 'Another User');

    // Group push: create, rename (replace without path, with the id in the value), add and remove members.
    r = await okta(
      'GET',
      `/Groups?filter=${encodeURIComponent('displayName eq "Okta Admins"')}&startIndex=1&count=100`,
    );
    assert.equal(r.body.totalResults, 0);
    r = await okta('POST', '/Groups', { schemas: [GROUP], displayName: 'Okta Admins', members: [] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const gid = r.body.id;
    r = await okta('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: 'test.user@okta.local' }] }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(
      (await ghUser('oe-okta', 'test.user@okta.local')).roles.some((x: any) => x.key === 'admin'),
      'group push maps to the role',
    );
    r = await okta('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { id: gid, displayName: 'Okta Admins' } }],
    });
    assert.equal(r.status, 200);
    r = await okta('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
    });
    assert.equal(r.status, 200);
    assert.ok(!(await ghUser('oe-okta', 'test.user@okta.local')).roles.some((x: any) => x.key === 'admin'));
    await okta('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: 'test.user@okta.local' }] }],
    });

    // Deactivate: PATCH replace without path, active false.
    r = await okta('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.active, false);
    const off = await t.call('GET', `/identity/resources/users/v1/${gh.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'oe-okta' },
    });
    assert.equal(off.body.tenants[0].isDisabled, true);
    // Reactivate.
    r = await okta('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    assert.equal(r.body.active, true);

    // Group delete, then unassign (deactivation again).
    assert.equal((await okta('DELETE', `/Groups/${gid}`)).status, 204);
    assert.ok(!(await ghUser('oe-okta', 'test.user@okta.local')).roles.some((x: any) => x.key === 'admin'));
    r = await okta('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    assert.equal(r.body.active, false);
    const events = await t.db.query<{ event_key: string }>(
      `SELECT event_key FROM events WHERE data->>'connectionId' = $1 ORDER BY seq`,
      [conn.id],
    );
    assert.deepEqual([...new Set(events.rows.map((e) => e.event_key))].sort(), [
      'scim.group_provisioned',
      'scim.user_deprovisioned',
      'scim.user_provisioned',
    ]);
  });
});

describe('Microsoft Entra ID: provision, update, deactivate, group push', () => {
  test('the whole cycle', async () => {
    const conn = (
      await t.call('POST', C, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'oe-entra' },
        body: { source: 'azure-ad', connectionName: 'Entra', syncToUserManagement: true },
      })
    ).body;
    await mapGroup('oe-entra', conn.id, 'Entra Admins');
    const entra = client(conn, 'Microsoft.Identity.Provisioning', 'application/scim+json');

    // Matching by userName (zero results), then create.
    let r = await entra('GET', `/Users?filter=${encodeURIComponent('userName eq "Test_User_ab6490ee@testuser.com"')}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.totalResults, 0);
    r = await entra(
      'GET',
      `/Users?filter=${encodeURIComponent('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')}`,
    );
    assert.equal(r.body.totalResults, 0);
    r = await entra('POST', '/Users', {
      schemas: [USER, ENT],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_ab6490ee@testuser.com',
      active: true,
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b@testuser.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      [ENT]: { department: 'Sales', employeeNumber: '99887766' },
      'urn:ietf:params:scim:schemas:extension:custom:2.0:User': { worksiteId: '180' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const id = r.body.id;
    assert.equal(r.body[ENT].department, 'Sales');
    assert.equal(
      r.body['urn:ietf:params:scim:schemas:extension:custom:2.0:User'],
      undefined,
      'unknown extensions are ignored',
    );
    const gh = await ghUser('oe-entra', 'test_user_fd0ea19b@testuser.com');
    assert.equal(gh.managedBy, 'scim2');
    assert.equal(gh.provider, 'scim2');
    r = await entra(
      'GET',
      `/Users?filter=${encodeURIComponent('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')}`,
    );
    assert.equal(r.body.Resources[0].id, id);
    // Duplicate create (Entra retries) is a 409 uniqueness.
    r = await entra('POST', '/Users', { schemas: [USER], userName: 'test_user_ab6490ee@testuser.com', active: true });
    assert.equal(r.status, 409);
    assert.equal(r.body.scimType, 'uniqueness');

    // Updates: capitalised ops, value filter path ("Add" where an email exists), manager as a bare id, dotted keys.
    r = await entra('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@testuser.com' },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        { op: 'Add', path: 'title', value: 'scim tester' },
        { op: 'Add', path: `${ENT}:manager`, value: '2819c223-7f76-453a-919d-413861904646' },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.emails[0].value, 'updatedEmail@testuser.com');
    assert.equal(r.body.name.familyName, 'updatedFamilyName');
    assert.deepEqual(r.body[ENT].manager, { value: '2819c223-7f76-453a-919d-413861904646' });
    assert.equal((await ghUser('oe-entra', 'updatedemail@testuser.com')).id, gh.id, 'the Gatehouse email follows');
    r = await entra('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Add', path: 'emails[type eq "work"].value', value: 'again@testuser.com' }],
    });
    assert.equal(r.body.emails.length, 1);
    assert.equal(r.body.emails[0].value, 'again@testuser.com');
    r = await entra('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [
        {
          op: 'replace',
          value: { 'name.givenName': 'Ada', 'name.familyName': 'Lovelace', displayName: 'Ada Lovelace' },
        },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name.givenName, 'Ada');
    assert.equal((await ghUser('oe-entra', 'again@testuser.com')).name, 'Ada Lovelace');
    r = await entra('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'userName', value: 'renamed@testuser.com' }],
    });
    assert.equal(r.body.userName, 'renamed@testuser.com');

    // Groups: create (with Entra's extra schema URI and meta), look up without members, add/remove members by value list.
    r = await entra('POST', '/Groups', {
      schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/Group'],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'Entra Admins',
      meta: { resourceType: 'Group' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const gid = r.body.id;
    r = await entra(
      'GET',
      `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "Entra Admins"')}`,
    );
    assert.equal(r.body.totalResults, 1);
    assert.equal(r.body.Resources[0].members, undefined);
    r = await entra('GET', `/Groups/${gid}?excludedAttributes=members`);
    assert.equal(r.status, 200);
    r = await entra('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok((await ghUser('oe-entra', 'again@testuser.com')).roles.some((x: any) => x.key === 'admin'));
    r = await entra(
      'GET',
      `/Groups?filter=${encodeURIComponent(`id eq "${gid}" and members eq "${id}"`)}&excludedAttributes=members`,
    );
    assert.equal(r.body.totalResults, 1);
    r = await entra('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'displayName', value: 'Entra Admins' }],
    });
    assert.equal(r.status, 200);
    r = await entra('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: id }] }],
    });
    assert.equal(r.status, 200);
    assert.ok(!(await ghUser('oe-entra', 'again@testuser.com')).roles.some((x: any) => x.key === 'admin'));

    // Disable: Entra's string boolean "False" with a capitalised op; sessions end.
    await t.db.query(
      `INSERT INTO sessions (id, tenant_id, user_id, amr, expires_at) VALUES (gen_random_uuid(), 'oe-entra', $1, '{pwd}', now() + interval '1 day')`,
      [gh.id],
    );
    r = await entra('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.active, false);
    const off = await t.call('GET', `/identity/resources/users/v1/${gh.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'oe-entra' },
    });
    assert.equal(off.body.tenants[0].isDisabled, true);
    assert.equal(
      (await t.db.query('SELECT 1 FROM sessions WHERE user_id = $1 AND revoked_at IS NULL', [gh.id])).rows.length,
      0,
    );
    r = await entra('GET', `/Users?filter=${encodeURIComponent('active eq false')}`);
    assert.equal(r.body.totalResults, 1);

    // Delete: the user leaves the account (and, with no other account, is removed).
    assert.equal((await entra('DELETE', `/Groups/${gid}`)).status, 204);
    assert.equal((await entra('DELETE', `/Users/${id}`)).status, 204);
    assert.equal((await entra('GET', `/Users/${id}`)).status, 404);
    const gone = await t.call('GET', `/identity/resources/users/v1/${gh.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'oe-entra' },
    });
    assert.equal(gone.status, 404);
  });
});

describe('syncToUserManagement false', () => {
  test('users stay in the directory only, and appear in user management when it is switched on', async () => {
    const conn = (
      await t.call('POST', C, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'oe-okta' },
        body: { source: 'other', syncToUserManagement: false },
      })
    ).body;
    const c = client(conn, 'test', 'application/scim+json');
    let r = await c('POST', '/Users', { schemas: [USER], userName: 'dironly@corp.test', active: true });
    assert.equal(r.status, 201);
    r = await c('POST', '/Users', { schemas: [USER], userName: 'no-email-handle', active: true });
    assert.equal(r.status, 201);
    assert.equal(await ghUser('oe-okta', 'dironly@corp.test'), undefined);
    const on = await t.call('PATCH', `${C}/${conn.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'oe-okta' },
      body: { syncToUserManagement: true },
    });
    assert.equal(on.status, 204);
    // The switch starts a sync job; the connection shows its progress.
    let status: any;
    for (const deadline = Date.now() + 20_000; ; ) {
      status = (
        await t.call('GET', `${C}/${conn.id}`, { token: vendor, headers: { 'gatehouse-tenant-id': 'oe-okta' } })
      ).body.syncStatus;
      if (status.state === 'completed' || status.state === 'failed' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(status.state, 'completed');
    assert.equal(status.processed, 1, 'the user without an email stays in the directory only');
    const u = await ghUser('oe-okta', 'dironly@corp.test');
    assert.equal(u.managedBy, 'scim2');
    // With sync on, a user without any email cannot be created.
    r = await c('POST', '/Users', { schemas: [USER], userName: 'another-handle' });
    assert.equal(r.status, 400);
    assert.equal(r.body.scimType, 'invalidValue');
  });
});
