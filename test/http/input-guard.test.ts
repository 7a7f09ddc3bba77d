import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

// Input no route can store or walk (found by fuzzing every route): deep nesting, NUL characters, values too long for
// an index. Each is a 400 that changes nothing, never a 500 or a broken stream.
let t: TestApp;
let vendor: string;

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'ig-a', name: 'A' });
});
after(async () => t?.close());

/** `{a: {a: … 1}}` nested `depth` levels, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('input guard', () => {
  test('a body nested deeper than 64 levels is a 400 and creates nothing; 60 levels are fine', async () => {
    // Sent as text: JSON.stringify itself runs out of stack on 5,000 levels.
    const raw = `{"tenantId":"ig-deep","name":"D","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/tenants/resources/tenants/v1',
      headers: { authorization: `Bearer ${vendor}`, 'content-type': 'application/json' },
      payload: raw,
    });
    const deep = { status: res.statusCode, body: JSON.parse(res.body) };
    assert.equal(deep.status, 400, res.body.slice(0, 300));
    assert.equal(deep.body.errorCode, 'GH-10001');
    assert.match(deep.body.errors[0], /nested deeper than 64 levels/);
    assert.equal((await t.call('GET', '/tenants/resources/tenants/v2/ig-deep', { token: vendor })).body.length, 0);
    const ok = await t.call('POST', '/tenants/resources/tenants/v1', {
      token: vendor,
      body: { tenantId: 'ig-ok', name: 'O', metadata: nested(60) },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body).slice(0, 300));
  });

  test('a NUL character in a body string, a key or a query value is a 400 naming where', async () => {
    const body = await t.call('POST', '/audits', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'ig-a' },
      body: { severity: 'Info', action: 'a', actor: { type: '\u0000', id: 'x' }, target: { type: 't', id: 'y' } },
    });
    assert.equal(body.status, 400, JSON.stringify(body.body));
    assert.match(body.body.errors[0], /^body\.actor\.type must not contain the NUL character/);
    const key = await t.call('POST', '/tenants/resources/tenants/v1', {
      token: vendor,
      body: { tenantId: 'ig-k', name: 'K', metadata: { 'a\u0000b': 1 } },
    });
    assert.equal(key.status, 400);
    const query = await t.call('GET', '/audits/export?actor=%00', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'ig-a' },
    });
    assert.equal(query.status, 400, String(query.body));
  });

  test('SCIM: a userName too long for its index is a SCIM 400, not a 500', async () => {
    const conn = (
      await t.call('POST', '/directory/resources/v1/configurations/scim2', {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'ig-a' },
        body: { source: 'other', syncToUserManagement: true },
      })
    ).body;
    const userName = randomBytes(3000).toString('hex').slice(0, 3000); // does not compress: over the btree row limit
    const res = await t.app.inject({
      method: 'POST',
      url: `/directory/resources/scim/v2.0/${conn.id}/Users`,
      headers: { authorization: `Bearer ${conn.token}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName,
        emails: [{ value: 'long@ig.test' }],
      }),
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(JSON.parse(res.body).status, '400');
  });
});
