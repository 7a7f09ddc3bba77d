import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

const RT = '/entitlements/resources/routes/v1';
const IMPORT = `${RT}/import-open-api`;

describe('entitlements: import route rules from an OpenAPI document', () => {
  let t: TestApp;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token, body });
  const offset = async () =>
    (await call('GET', '/entitlements/api/v1/vendor-entitlements-snapshot-offset')).body.snapshotOffset as number;
  const decide = async (method: string, path: string, permissions: string[] = []) =>
    (
      await call('POST', '/entitlements/api/v1/decisions/routes', {
        input: { subjectContext: { tenantId: 'acme', userId: 'u1', permissions }, requestContext: { method, path } },
      })
    ).body.result;

  before(async () => {
    t = await startTestApp();
    token = await t.vendorToken();
    await account(t, { id: 'acme', name: 'Acme' });
  });
  after(async () => t.close());

  const doc = {
    openapi: '3.1.0',
    info: { title: 'Orders', version: '1' },
    servers: [{ url: 'https://api.example.com/v2/' }],
    paths: {
      '/orders': {
        get: { summary: 'List orders', 'x-gatehouse-rules': [{ type: 'permission', value: 'orders.read' }] },
        post: { operationId: 'createOrder', 'x-gatehouse-policy': 'deny' },
        options: { summary: 'CORS' },
      },
      '/orders/{orderId}': {
        get: { summary: 'Get an order', 'x-gatehouse-policy': 'allow' },
        delete: {},
      },
    },
  };

  test('one route per operation, in document order after existing routes, with the base path; the snapshot moves', async () => {
    const first = await call('POST', RT, {
      method: 'GET',
      path: '/health',
      policyType: 'allow',
      description: 'existing',
    });
    assert.equal(first.status, 200);
    const o0 = await offset();
    const r = await call('POST', IMPORT, doc);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.created.map((x: any) => [x.method, x.path, x.policyType, x.description]),
      [
        ['GET', '/v2/orders', 'ruleBased', 'List orders'],
        ['POST', '/v2/orders', 'deny', 'createOrder'],
        ['GET', '/v2/orders/{orderId}', 'allow', 'Get an order'],
        ['DELETE', '/v2/orders/{orderId}', 'deny', ''],
      ],
    );
    assert.deepEqual(
      r.body.created[0].rules.map((x: any) => [x.type, x.value]),
      [['permission', 'orders.read']],
    );
    assert.ok(r.body.created.every((x: any) => x.priority > first.body.priority));
    assert.deepEqual(r.body.skipped, [
      { method: 'OPTIONS', path: '/v2/orders', reason: 'method not supported by route rules' },
    ]);
    assert.ok((await offset()) > o0);

    // The imported rules decide at once.
    assert.deepEqual(await decide('GET', '/v2/orders', ['orders.read']), { result: true });
    assert.equal((await decide('GET', '/v2/orders', [])).result, false);
    assert.deepEqual(await decide('GET', '/v2/orders/42'), { result: true });
    assert.deepEqual(await decide('DELETE', '/v2/orders/42'), { result: false, justification: 'ROUTE_DENIED' });
  });

  test('importing again skips what exists and changes nothing; defaultPolicyType applies to undeclared operations', async () => {
    const before = (await call('GET', RT)).body;
    const again = await call('POST', IMPORT, doc);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.created, []);
    assert.equal(again.body.skipped.filter((s: any) => s.reason.includes('exists')).length, 4);
    assert.deepEqual((await call('GET', RT)).body, before);

    const swagger = { swagger: '2.0', basePath: '/legacy', paths: { '/ping': { get: {} } } };
    const r = await call('POST', `${IMPORT}?defaultPolicyType=allow`, swagger);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.created.map((x: any) => [x.method, x.path, x.policyType]),
      [['GET', '/legacy/ping', 'allow']],
    );
  });

  test('bad documents are 400 naming the field, and create nothing', async () => {
    const count = (await call('GET', RT)).body.length;
    const cases: [unknown, RegExp][] = [
      [{ paths: {} }, /OpenAPI 3.x or Swagger 2.0/],
      [{ openapi: '3.0.0' }, /body.paths must be an object/],
      [{ openapi: '3.0.0', paths: { orders: { get: {} } } }, /must start with "\/"/],
      [{ openapi: '3.0.0', paths: { '/a': { get: { 'x-gatehouse-policy': 'maybe' } } } }, /x-gatehouse-policy must be/],
      [
        { openapi: '3.0.0', paths: { '/a': { get: { 'x-gatehouse-rules': [{ type: 'role', value: 'x' }] } } } },
        /x-gatehouse-rules\[0\]/,
      ],
      [
        { openapi: '3.0.0', paths: { '/ok': { get: {} }, '/a': { post: 'nope' } } },
        /\.post must be an operation object/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', IMPORT, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0], message);
    }
    assert.equal((await call('POST', `${IMPORT}?defaultPolicyType=open`, { openapi: '3.0.0', paths: {} })).status, 400);
    assert.equal((await call('GET', RT)).body.length, count, 'nothing was created');
    const user = await t.userToken({ tenantId: 'acme' });
    assert.equal((await t.call('POST', IMPORT, { token: user, body: doc })).status, 403);
    assert.equal((await t.call('POST', IMPORT, { body: doc })).status, 401);
  });
});
