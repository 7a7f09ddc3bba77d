import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

/**
 * Every flow that makes a user goes through the users module's creation: each new user has one `user.created` naming
 * its source, a membership with the account's default roles, and a taken email is the same 409 whatever the flow.
 */

const U = '/identity/resources/users';
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const TENANT = 'src-a';

let t: TestApp;
let vendor: string;
let defaultRole: string;
before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  const account = await t.call('POST', '/tenants/resources/tenants/v1', {
    token: vendor,
    body: { tenantId: TENANT, name: 'Sources' },
  });
  assert.equal(account.status, 201, JSON.stringify(account.body));
  const roles = await t.call('POST', '/identity/resources/roles/v1', {
    token: vendor,
    body: [{ key: 'src-default', name: 'Source default', isDefault: true, level: 1 }],
  });
  assert.equal(roles.status, 201, JSON.stringify(roles.body));
  defaultRole = roles.body[0].id;
});
after(async () => t?.close());

const created = async (userId: string) =>
  (
    await t.db.query<{ data: Record<string, unknown> }>(
      `SELECT data FROM events WHERE event_key = 'user.created' AND entity_id = $1`,
      [userId],
    )
  ).rows.map((r) => r.data);
/** The account's default roles (the environment's and its own), sorted: what every new member here gets. */
const defaults = async () =>
  (
    await t.db.query<{ id: string }>(
      'SELECT id FROM roles WHERE is_default AND (tenant_id IS NULL OR tenant_id = $1) ORDER BY id',
      [TENANT],
    )
  ).rows.map((r) => r.id);
const rolesOf = async (userId: string) =>
  (
    await t.db.query<{ role_id: string }>(
      'SELECT role_id FROM user_roles WHERE tenant_id = $1 AND user_id = $2 ORDER BY role_id',
      [TENANT, userId],
    )
  ).rows.map((r) => r.role_id);

describe('user creation through every flow', () => {
  test('a SCIM-provisioned user (sync on) is created like any other: user.created with source scim, default roles', async () => {
    const conn = await t.call('POST', C, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { source: 'okta', syncToUserManagement: true },
    });
    assert.equal(conn.status, 201, JSON.stringify(conn.body));
    const r = await t.call('POST', `${S}/${conn.body.id}/Users`, {
      token: conn.body.token,
      headers: { 'content-type': 'application/scim+json' },
      body: {
        schemas: [USER],
        userName: 'Dir.User@Src.test',
        name: { givenName: 'Dir', familyName: 'User' },
        active: true,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { rows } = await t.db.query<{ id: string; managed_by: string }>(
      'SELECT id, managed_by FROM users WHERE email = $1',
      ['dir.user@src.test'],
    );
    assert.equal(rows[0]?.managed_by, 'scim2');
    assert.deepEqual(await created(rows[0].id), [
      { userId: rows[0].id, email: 'dir.user@src.test', tenantId: TENANT, source: 'scim' },
    ]);
    assert.deepEqual(await rolesOf(rows[0].id), await defaults());
    assert.ok((await defaults()).includes(defaultRole));

    // The same email through the management API: the one 409 of a taken email, nothing written.
    const again = await t.call('POST', `${U}/v1`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { email: 'DIR.user@src.test', name: 'X' },
    });
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.equal((await t.db.query('SELECT 1 FROM users WHERE email = $1', ['dir.user@src.test'])).rows.length, 1);
  });

  test('the management API names its source (and the role keys) in user.created', async () => {
    const r = await t.call('POST', `${U}/v1`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { email: 'api@src.test', name: 'Api' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const [data] = await created(r.body.id);
    assert.equal(data.source, 'api');
    assert.ok((data.roles as string[]).includes('src-default'), JSON.stringify(data));
    assert.deepEqual(await rolesOf(r.body.id), await defaults());
  });
});
