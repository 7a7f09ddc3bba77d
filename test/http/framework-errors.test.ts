import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

// What client libraries and SCIM clients meet before any route runs: empty JSON bodies, unknown routes, malformed
// URLs, over-long path parameters. Each prefix answers in the body its clients read.

let t: TestApp;
let vendor: string;
const S = '/directory/resources/scim/v2.0';
const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
let conn: { id: string; token: string };

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'fe-acme', name: 'Acme' });
  const c = await t.call('POST', '/directory/resources/v1/configurations/scim2', {
    token: vendor,
    headers: { 'gatehouse-tenant-id': 'fe-acme' },
    body: { source: 'other', syncToUserManagement: true },
  });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  conn = c.body;
});
after(async () => t?.close());

const assertWireError = (r: { status: number; body: any }, status: number) => {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.ok(Array.isArray(r.body.errors) && typeof r.body.errors[0] === 'string', JSON.stringify(r.body));
  assert.match(r.body.errorCode, /^GH-\d{5}$/);
};

describe('an empty body with content-type application/json is no body', () => {
  test('DELETE of a sub-account as the client libraries send it (content-type set, no body) succeeds', async () => {
    const sub = await t.call('POST', '/tenants/resources/sub-tenants/v1', {
      token: vendor,
      body: { tenantId: 'fe-sub', name: 'Sub', parentTenantId: 'fe-acme' },
    });
    assert.equal(sub.status, 201, JSON.stringify(sub.body));
    const del = await t.call('DELETE', '/tenants/resources/sub-tenants/v1/fe-sub', {
      token: vendor,
      headers: { 'content-type': 'application/json' },
      raw: '',
    });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    const gone = await t.call('GET', '/tenants/resources/tenants/v2/fe-sub', { token: vendor });
    assert.deepEqual(gone.body, [], JSON.stringify(gone.body));
  });

  test('a route that needs a body still names what is missing; malformed JSON is still a 400', async () => {
    const login = '/identity/resources/auth/v1/user';
    const empty = await t.call('POST', login, {
      headers: { 'content-type': 'application/json', 'gatehouse-tenant-id': 'fe-acme' },
      raw: '',
    });
    assertWireError(empty, 400);
    assert.match(empty.body.errors[0], /body/);
    const bad = await t.call('POST', '/tenants/resources/tenants/v1', {
      token: vendor,
      headers: { 'content-type': 'application/json' },
      raw: '{"tenantId":',
    });
    assertWireError(bad, 400);
  });
});

describe('framework errors answer the wire body', () => {
  test('a path parameter over the maximum length: 414 with the wire body, not the framework body', async () => {
    const r = await t.call('GET', `/tenants/resources/tenants/v2/${'a'.repeat(600)}`, { token: vendor });
    assertWireError(r, 414);
    assert.equal(r.body.code, undefined);
  });

  test('a malformed URL: 400 with the wire body', async () => {
    const r = await t.call('GET', '/tenants/resources/tenants/v2/%E0%A4%A', { token: vendor });
    assertWireError(r, 400);
  });

  test('unknown route and unknown method: 404 with the wire body, also under /frontegg', async () => {
    assertWireError(await t.call('GET', '/identity/resources/no-such-thing/v1', { token: vendor }), 404);
    assertWireError(await t.call('PATCH', '/tenants/resources/tenants/v1', { token: vendor, body: {} }), 404);
    assertWireError(await t.call('GET', '/frontegg/identity/resources/no-such-thing/v1', { token: vendor }), 404);
  });

  test('unsupported media type and a body over the limit keep the wire body', async () => {
    assertWireError(
      await t.call('POST', '/tenants/resources/tenants/v1', {
        token: vendor,
        headers: { 'content-type': 'text/xml' },
        raw: '<a/>',
      }),
      415,
    );
    const big = JSON.stringify({ tenantId: 'x', name: 'y'.repeat(1_100_000) });
    assertWireError(
      await t.call('POST', '/tenants/resources/tenants/v1', {
        token: vendor,
        raw: big,
        headers: { 'content-type': 'application/json' },
      }),
      413,
    );
  });

  test('under /oauth the framework errors are RFC 6749 bodies', async () => {
    const r = await t.call('GET', '/oauth/no-such-endpoint');
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'invalid_request');
    assert.equal(typeof r.body.error_description, 'string');
    assert.equal(r.body.errorCode, undefined);
  });
});

describe('SCIM: strict RFC 7644 errors, resource names in any case', () => {
  const scim = async (method: string, url: string, body?: unknown) => {
    const res = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${conn.token}`, 'content-type': 'application/scim+json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
  };
  const assertScim = (r: { status: number; body: any }, status: number) => {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.deepEqual(r.body.schemas, [SCIM_ERROR]);
    assert.equal(r.body.status, String(status));
    assert.deepEqual(
      Object.keys(r.body).filter((k) => !['schemas', 'status', 'scimType', 'detail'].includes(k)),
      [],
    );
  };

  test('unknown SCIM endpoint, over-long id and malformed URL answer SCIM errors only', async () => {
    assertScim(await scim('GET', `${S}/${conn.id}/Nothing`), 404);
    assertScim(await scim('GET', `${S}/${conn.id}/Users/${'a'.repeat(600)}`), 414);
    assertScim(await scim('GET', `${S}/${conn.id}/Users/%E0%A4%A`), 400);
    assertScim(await scim('POST', `${S}/${conn.id}/Users`, { schemas: [] }), 400);
  });

  test('/users, /GROUPS and /serviceproviderconfig reach the same resources as their canonical names', async () => {
    const made = await scim('POST', `${S}/${conn.id}/users`, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'casey@fe.test',
      emails: [{ value: 'casey@fe.test', primary: true }],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const read = await scim('GET', `${S}/${conn.id}/USERS/${made.body.id}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.userName, 'casey@fe.test');
    assert.equal((await scim('GET', `${S}/${conn.id}/groups`)).status, 200);
    assert.equal((await scim('GET', `${S}/${conn.id}/serviceproviderconfig`)).status, 200);
  });
});
