import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compile, parseDecisionRequest } from '../../src/modules/entitlements/engine/index.ts';
import { loadTables, requestBody, snapshotOf } from './tables.ts';

/** The decision tables against the engine in-process. */
for (const table of loadTables()) {
  describe(`decision table ${table.file}: ${table.description}`, () => {
    const engine = compile(snapshotOf(table));
    for (const c of table.cases) {
      test(c.name, () => {
        const parsed = parseDecisionRequest(c.kind, requestBody(c));
        assert.ok(parsed.ok, JSON.stringify(parsed));
        assert.deepEqual(engine.decide(c.kind, parsed.input), c.expect);
      });
    }
  });
}

describe('decision input validation', () => {
  const sc = { tenantId: 't' };
  const bad: [string, 'feature' | 'permission' | 'route', unknown, RegExp][] = [
    ['not an object', 'feature', 'x', /JSON object/],
    ['missing input', 'feature', {}, /input is required/],
    ['missing tenantId', 'feature', { input: { subjectContext: {}, requestContext: { featureKey: 'a' } } }, /tenantId/],
    [
      'tenantId wrong type',
      'feature',
      { input: { subjectContext: { tenantId: 5 }, requestContext: { featureKey: 'a' } } },
      /tenantId/,
    ],
    [
      'permissions wrong type',
      'permission',
      { input: { subjectContext: { ...sc, permissions: 'a' }, requestContext: { permissionKey: 'a' } } },
      /permissions/,
    ],
    [
      'userId wrong type',
      'feature',
      { input: { subjectContext: { ...sc, userId: 1 }, requestContext: { featureKey: 'a' } } },
      /userId/,
    ],
    [
      'attributes wrong type',
      'feature',
      { input: { subjectContext: { ...sc, attributes: [] }, requestContext: { featureKey: 'a' } } },
      /attributes/,
    ],
    ['missing requestContext', 'feature', { input: { subjectContext: sc } }, /requestContext/],
    ['missing featureKey', 'feature', { input: { subjectContext: sc, requestContext: {} } }, /featureKey/],
    [
      'missing permissionKey',
      'permission',
      { input: { subjectContext: sc, requestContext: { featureKey: 'a' } } },
      /permissionKey/,
    ],
    [
      'unknown method',
      'route',
      { input: { subjectContext: sc, requestContext: { method: 'FETCH', path: '/a' } } },
      /method must be one of/,
    ],
    ['missing path', 'route', { input: { subjectContext: sc, requestContext: { method: 'GET' } } }, /path/],
  ];
  for (const [name, kind, body, re] of bad) {
    test(name, () => {
      const r = parseDecisionRequest(kind, body);
      assert.equal(r.ok, false);
      if (!r.ok) {
        assert.equal(r.error.code, 'invalid_parameter');
        assert.match(r.error.message, re);
      }
    });
  }
  test('lower-case method is accepted; userId null and missing permissions default', () => {
    const r = parseDecisionRequest('route', {
      input: { subjectContext: { tenantId: 't', userId: null }, requestContext: { method: 'get', path: '/a' } },
    });
    assert.ok(r.ok);
    if (r.ok)
      assert.deepEqual(r.input, {
        subjectContext: { tenantId: 't', userId: null, permissions: [], attributes: {} },
        requestContext: { method: 'GET', path: '/a' },
      });
  });
});
