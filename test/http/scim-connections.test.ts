import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const scim = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['sc-acme', 'sc-beta']) await account(t, { id });
});
after(async () => t?.close());

async function createConn(
  tenantId: string,
  body: Record<string, unknown> = { source: 'okta', connectionName: 'Okta' },
) {
  const r = await t.call('POST', C, { token: vendor, body, headers: hdr(tenantId) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as { id: string; connectionName: string; token: string };
}

async function scimCall(method: string, url: string, token: string, body?: unknown) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: scim(token),
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}

describe('SCIM connections: management with a vendor token', () => {
  test('create returns the token once; read and list never show it and it is stored hashed', async () => {
    const c = await createConn('sc-acme', {
      source: 'okta',
      connectionName: 'Okta prod',
      syncToUserManagement: false,
      metadata: { region: 'eu' },
    });
    assert.ok(c.id && c.token.length > 40);
    assert.equal(c.connectionName, 'Okta prod');
    const r = await t.call('GET', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-acme') });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), [
      'connectionName',
      'createdAt',
      'id',
      'lastSync',
      'metadata',
      'source',
      'syncStatus',
      'syncToUserManagement',
      'tenantId',
    ]);
    assert.deepEqual(r.body.syncStatus, { state: 'idle', processed: 0 });
    assert.equal(r.body.tenantId, 'sc-acme');
    assert.equal(r.body.source, 'okta');
    assert.equal(r.body.syncToUserManagement, false);
    assert.deepEqual(r.body.metadata, { region: 'eu' });
    assert.ok(!JSON.stringify(r.body).includes(c.token));
    const stored = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM scim_connections WHERE id = $1', [
      c.id,
    ]);
    assert.notEqual(stored.rows[0].token_hash, c.token);
    assert.match(stored.rows[0].token_hash, /^[0-9a-f]{64}$/);
    const list = await t.call('GET', `${C}?tenantId=sc-acme`, { token: vendor });
    assert.equal(list.status, 200);
    assert.ok(list.body.some((x: any) => x.id === c.id));
    assert.ok(list.body.every((x: any) => x.tenantId === 'sc-acme' && !('token' in x)));
    const bySource = await t.call('GET', `${C}?source=azure-ad`, { token: vendor, headers: hdr('sc-acme') });
    assert.deepEqual(bySource.body, []);
  });

  test('update syncToUserManagement and metadata (204), then read shows them', async () => {
    const c = await createConn('sc-acme');
    const u = await t.call('PATCH', `${C}/${c.id}`, {
      token: vendor,
      headers: hdr('sc-acme'),
      body: { syncToUserManagement: false, metadata: { a: 1 } },
    });
    assert.equal(u.status, 204);
    const r = await t.call('GET', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-acme') });
    assert.equal(r.body.syncToUserManagement, false);
    assert.deepEqual(r.body.metadata, { a: 1 });
  });

  test('bad input: unknown source, missing tenant header, unknown id, another account', async () => {
    assert.equal(
      (await t.call('POST', C, { token: vendor, headers: hdr('sc-acme'), body: { source: 'ldap' } })).status,
      400,
    );
    assert.equal((await t.call('POST', C, { token: vendor, headers: hdr('sc-acme'), body: {} })).status, 400);
    const noHeader = await t.call('POST', C, { token: vendor, body: { source: 'okta' } });
    assert.equal(noHeader.status, 400);
    assert.equal(
      (await t.call('POST', C, { token: vendor, headers: hdr('no-such-account'), body: { source: 'okta' } })).status,
      404,
    );
    const c = await createConn('sc-acme');
    const other = await t.call('GET', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-beta') });
    assert.equal(other.status, 404);
    assert.equal(other.body.errorCode, 'GH-60001');
    assert.equal((await t.call('GET', `${C}/not-a-uuid`, { token: vendor, headers: hdr('sc-acme') })).status, 404);
    assert.equal(
      (
        await t.call('PATCH', `${C}/${c.id}`, {
          token: vendor,
          headers: hdr('sc-beta'),
          body: { syncToUserManagement: true },
        })
      ).status,
      404,
    );
    assert.equal((await t.call('DELETE', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-beta') })).status, 404);
  });

  test('rotate: the new token works, the old one is 401 at once', async () => {
    const c = await createConn('sc-acme');
    assert.equal((await scimCall('GET', `${S}/${c.id}/Users`, c.token)).status, 200);
    const r = await t.call('POST', `${C}/${c.id}/token`, { token: vendor, headers: hdr('sc-acme') });
    assert.equal(r.status, 200);
    assert.notEqual(r.body.token, c.token);
    const old = await scimCall('GET', `${S}/${c.id}/Users`, c.token);
    assert.equal(old.status, 401);
    assert.deepEqual(old.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
    assert.equal(old.body.status, '401');
    assert.equal(old.body.errorCode, undefined);
    assert.match(old.body.detail, /token/i);
    assert.equal((await scimCall('GET', `${S}/${c.id}/Users`, r.body.token)).status, 200);
  });

  test('lastSync moves with provisioning calls, at a granularity of one second', async () => {
    const c = await createConn('sc-acme', { source: 'okta', syncToUserManagement: false });
    const lastSync = async () =>
      (await t.call('GET', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-acme') })).body.lastSync as string;
    const before = await lastSync();
    await new Promise((r) => setTimeout(r, 15));
    const p = await scimCall('POST', `${S}/${c.id}/Users`, c.token, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'sync@acme.test',
    });
    assert.equal(p.status, 201);
    const afterPost = await lastSync();
    assert.ok(afterPost > before, `${afterPost} > ${before}`);
    // Within the second: lastSync may stay, but is never more than a second older than the latest call.
    const patchedAt = Date.now();
    assert.equal(
      (
        await scimCall('PATCH', `${S}/${c.id}/Users/${p.body.id}`, c.token, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', path: 'title', value: 'CTO' }],
        })
      ).status,
      200,
    );
    const afterPatch = await lastSync();
    assert.ok(afterPatch >= afterPost);
    assert.ok(
      Date.parse(afterPatch) >= patchedAt - 1000,
      `${afterPatch} within a second of the PATCH at ${new Date(patchedAt).toISOString()}`,
    );
    // The next call after the second has passed moves it again (a read counts too).
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await scimCall('GET', `${S}/${c.id}/Users`, c.token)).status, 200);
    assert.ok((await lastSync()) > afterPatch);
    // Calls that fail authentication do not move it.
    const now = await lastSync();
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await scimCall('GET', `${S}/${c.id}/Users`, 'ghscim_wrong')).status, 401);
    assert.equal(await lastSync(), now);
  });

  test('delete without deleteAll keeps provisioned users (no longer scim-managed); with deleteAll removes them', async () => {
    for (const deleteAll of [false, true]) {
      const c = await createConn('sc-beta', { source: 'azure-ad', syncToUserManagement: true });
      const email = `del-${deleteAll}@beta.test`;
      const p = await scimCall('POST', `${S}/${c.id}/Users`, c.token, {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: email,
      });
      assert.equal(p.status, 201, JSON.stringify(p.body));
      const users = await t.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent(email)}`, {
        token: vendor,
        headers: hdr('sc-beta'),
      });
      assert.equal(users.body.items.length, 1);
      const userId = users.body.items[0].id;
      const d = await t.call('DELETE', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-beta'), body: { deleteAll } });
      assert.equal(d.status, 204);
      assert.equal((await t.call('GET', `${C}/${c.id}`, { token: vendor, headers: hdr('sc-beta') })).status, 404);
      assert.equal((await scimCall('GET', `${S}/${c.id}/Users`, c.token)).status, 401);
      const after = await t.call('GET', `/identity/resources/users/v1/${userId}`, {
        token: vendor,
        headers: hdr('sc-beta'),
      });
      if (deleteAll) assert.equal(after.status, 404);
      else {
        assert.equal(after.status, 200);
        assert.equal(after.body.managedBy, 'gatehouse');
      }
      const dir = await t.db.query('SELECT 1 FROM scim_users WHERE connection_id = $1', [c.id]);
      assert.equal(dir.rows.length, 0);
    }
  });
});

describe('SCIM connections: self-service with a user token', () => {
  test('a user with fe.secure.*.scim manages only their own account', async () => {
    const admin = await t.userToken({
      tenantId: 'sc-beta',
      permissions: ['fe.secure.read.scim', 'fe.secure.write.scim', 'fe.secure.delete.scim'],
    });
    const created = await t.call('POST', C, { token: admin, body: { source: 'other', connectionName: 'self' } });
    assert.equal(created.status, 201);
    const r = await t.call('GET', `${C}/${created.body.id}`, { token: admin });
    assert.equal(r.body.tenantId, 'sc-beta');
    // The tenant header does not move a user token to another account.
    const acme = await createConn('sc-acme');
    assert.equal((await t.call('GET', `${C}/${acme.id}`, { token: admin, headers: hdr('sc-acme') })).status, 404);
    assert.equal(
      (
        await t.call('PATCH', `${C}/${acme.id}`, {
          token: admin,
          headers: hdr('sc-acme'),
          body: { syncToUserManagement: false },
        })
      ).status,
      404,
    );
    assert.equal((await t.call('DELETE', `${C}/${acme.id}`, { token: admin })).status, 404);
    assert.equal((await t.call('POST', `${C}/${acme.id}/token`, { token: admin })).status, 404);
    const list = await t.call('GET', `${C}?tenantId=sc-acme`, { token: admin });
    assert.deepEqual(list.body, []);
    const own = await t.call('GET', C, { token: admin });
    assert.ok(own.body.length >= 1 && own.body.every((x: any) => x.tenantId === 'sc-beta'));
    assert.equal((await t.call('DELETE', `${C}/${created.body.id}`, { token: admin })).status, 204);
  });

  test('without the permission: 403; reading needs read, writing needs write', async () => {
    const reader = await t.userToken({ tenantId: 'sc-beta', permissions: ['fe.secure.read.scim'] });
    assert.equal((await t.call('POST', C, { token: reader, body: { source: 'okta' } })).status, 403);
    assert.equal((await t.call('GET', C, { token: reader })).status, 200);
    const nobody = await t.userToken({ tenantId: 'sc-beta', permissions: ['fe.secure.read.users'] });
    const r = await t.call('GET', C, { token: nobody });
    assert.equal(r.status, 403);
    assert.equal((await t.call('GET', C)).status, 401);
  });

  test('the built-in admin role holds the SCIM permissions; read-only holds read', async () => {
    const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
    const perms = await t.call('GET', '/identity/resources/permissions/v1', { token: vendor });
    const byId = new Map(perms.body.map((p: any) => [p.id, p.key]));
    const keysOf = (key: string) =>
      (roles.body.find((r: any) => r.key === key).permissions as string[]).map((id) => byId.get(id));
    assert.ok(keysOf('admin').includes('fe.secure.write.scim'));
    assert.ok(keysOf('read-only').includes('fe.secure.read.scim'));
    assert.ok(!keysOf('read-only').includes('fe.secure.write.scim'));
  });
});
