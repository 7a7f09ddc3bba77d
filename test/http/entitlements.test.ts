import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';
import { applyTable, clearEntitlements, KIND_PATH, loadTables, requestBody } from '../decisions/tables.ts';

const E = '/entitlements/resources';

describe('entitlements management API, snapshot and server-side decisions', () => {
  let t: TestApp;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token, body });
  const offset = async () =>
    (await call('GET', '/entitlements/api/v1/vendor-entitlements-snapshot-offset')).body.snapshotOffset as number;

  before(async () => {
    t = await startTestApp();
    token = await t.vendorToken();
    for (const id of ['acme', 'globex']) await account(t, { id });
  });
  after(async () => t.close());

  test('vendor token required; a user token is refused', async () => {
    assert.equal((await t.call('GET', `${E}/features/v1`)).status, 401);
    const user = await t.userToken({ tenantId: 'acme' });
    assert.equal((await t.call('GET', `${E}/features/v1`, { token: user })).status, 403);
  });

  test('features: create, read, list, update, delete; duplicate key 409; every write bumps the offset', async () => {
    const o0 = await offset();
    const r = await call('POST', `${E}/features/v1`, {
      name: 'Reports',
      key: 'reports',
      description: 'd',
      permissions: ['reports.read', 'reports.read'],
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.key, 'reports');
    assert.deepEqual(r.body.permissions, ['reports.read']);
    assert.deepEqual(r.body.metadata, {});
    assert.ok(r.body.vendorId && r.body.createdAt);
    assert.equal(await offset(), o0 + 1);
    const dup = await call('POST', `${E}/features/v1`, { name: 'Other', key: 'reports' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-50002');
    assert.equal(await offset(), o0 + 1, 'a refused write does not bump');
    const v2 = await call('POST', `${E}/features/v2`, {
      name: 'Export',
      key: 'export',
      permissions: [{ permissionKey: 'export.run' }],
      metadata: '{"tier":1}',
    });
    assert.equal(v2.status, 200);
    assert.deepEqual(v2.body.permissions, ['export.run']);
    assert.deepEqual(v2.body.metadata, { tier: 1 });
    const up = await call('PATCH', `${E}/features/v1/${r.body.id}`, { name: 'Reporting', permissions: ['reports.*'] });
    assert.equal(up.status, 200);
    assert.equal(up.body.name, 'Reporting');
    assert.deepEqual(up.body.permissions, ['reports.*']);
    assert.equal((await call('PATCH', `${E}/features/v1/${r.body.id}`, { key: 'export' })).status, 409);
    assert.equal((await call('GET', `${E}/features/v1/${r.body.id}`)).body.name, 'Reporting');
    const list = await call('GET', `${E}/features/v1?limit=1`);
    assert.equal(list.body.items.length, 1);
    assert.equal(list.body.hasNext, true);
    assert.equal((await call('POST', `${E}/features/v1`, { name: 'x' })).status, 400);
    assert.equal((await call('POST', `${E}/features/v1`, { name: 'x', key: 5 })).status, 400);
    assert.equal((await call('DELETE', `${E}/features/v1/${v2.body.id}`)).status, 200);
    assert.equal((await call('DELETE', `${E}/features/v1/${v2.body.id}`)).status, 404);
    assert.equal((await call('GET', `${E}/features/v1/not-an-id`)).status, 404);
  });

  test('plans: rules validated (unknown operator, wrong value shape 400), features linked by key or id', async () => {
    const bad = await call('POST', `${E}/plans/v1`, {
      name: 'bad',
      rules: [
        {
          description: 'r',
          conditionLogic: 'and',
          treatment: 'true',
          conditions: [{ attribute: 'a', op: 'bigger', value: { number: 1 }, negate: false }],
        },
      ],
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-50011');
    assert.match(bad.body.errors[0], /rules\[0\]\.conditions\[0\]\.op must be one of/);
    const shape = await call('POST', `${E}/plans/v1`, {
      name: 'bad',
      rules: [
        {
          description: 'r',
          conditionLogic: 'and',
          treatment: 'true',
          conditions: [{ attribute: 'a', op: 'greater_than', value: { list: ['1'] }, negate: false }],
        },
      ],
    });
    assert.equal(shape.status, 400);
    assert.match(shape.body.errors[0], /value must be \{number: number\} for op greater_than/);
    const regex = await call('POST', `${E}/plans/v1`, {
      name: 'bad',
      rules: [{ treatment: 'true', conditions: [{ attribute: 'a', op: 'matches', value: { string: '(' } }] }],
    });
    assert.equal(regex.status, 400);
    assert.equal((await call('POST', `${E}/plans/v1`, { name: 'bad', featureKeys: ['nope'] })).status, 404);

    const rules = [
      {
        description: 'gold',
        conditionLogic: 'and',
        treatment: 'true',
        conditions: [{ attribute: 'tier', op: 'in_list', value: { list: ['gold'] }, negate: false }],
      },
    ];
    const p = await call('POST', `${E}/plans/v1`, {
      name: 'Pro',
      featureKeys: ['reports'],
      rules,
      defaultTimeLimitation: 30,
      assignOnSignup: true,
      description: 'pro plan',
    });
    assert.equal(p.status, 200);
    assert.equal(p.body.name, 'Pro');
    assert.equal(p.body.defaultTreatment, 'false');
    assert.deepEqual(p.body.rules, rules);
    assert.equal(p.body.defaultTimeLimitation, 30);
    assert.equal(p.body.assignOnSignup, true);
    assert.deepEqual(
      p.body.features.map((f: any) => f.key),
      ['reports'],
    );
    assert.equal((await call('POST', `${E}/plans/v1`, { name: 'Pro' })).status, 409);
    const exp = await call('POST', `${E}/features/v1`, { name: 'Export', key: 'export2' });
    const linked = await call('PATCH', `${E}/plans/v1/${p.body.id}/features/link`, { featuresIds: [exp.body.id] });
    assert.deepEqual(linked.body.features.map((f: any) => f.key).sort(), ['export2', 'reports']);
    const feats = await call('GET', `${E}/plans/v1/${p.body.id}/features`);
    assert.equal(feats.body.items.length, 2);
    const unlinked = await call('PATCH', `${E}/plans/v1/${p.body.id}/features/unlink`, { featuresIds: [exp.body.id] });
    assert.deepEqual(
      unlinked.body.features.map((f: any) => f.key),
      ['reports'],
    );
    const up = await call('PATCH', `${E}/plans/v1/${p.body.id}`, { defaultTreatment: 'true', rules: [] });
    assert.equal(up.body.defaultTreatment, 'true');
    assert.deepEqual(up.body.rules, []);
    assert.equal((await call('PATCH', `${E}/plans/v1/${p.body.id}`, {})).status, 400);
    assert.equal((await call('GET', `${E}/plans/v1`)).body.items.length, 1);
  });

  test('entitlements: grant to an account or a user, default time limit, duplicates 409, unknown account 404, batch', async () => {
    const plan = (await call('GET', `${E}/plans/v1`)).body.items[0];
    const g = await call('POST', `${E}/entitlements/v2`, { planId: plan.id, tenantId: 'acme' });
    assert.equal(g.status, 200);
    assert.equal(g.body.tenantId, 'acme');
    assert.equal(g.body.userId, null);
    assert.equal(g.body.plan.name, 'Pro');
    const days = (Date.parse(g.body.expirationDate) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, 'plan default time limitation sets the expiry');
    assert.equal((await call('POST', `${E}/entitlements/v2`, { planId: plan.id, tenantId: 'acme' })).status, 409);
    assert.equal((await call('POST', `${E}/entitlements/v2`, { planId: plan.id, tenantId: 'nope' })).status, 404);
    assert.equal(
      (await call('POST', `${E}/entitlements/v2`, { planId: '00000000-0000-0000-0000-000000000000', tenantId: 'acme' }))
        .status,
      404,
    );
    assert.equal(
      (await call('POST', `${E}/entitlements/v2`, { planId: plan.id, tenantId: 'acme', expirationDate: 'tomorrow' }))
        .status,
      400,
    );
    const u = await call('POST', `${E}/entitlements/v2`, {
      planId: plan.id,
      tenantId: 'acme',
      userId: 'alice',
      expirationDate: null,
    });
    assert.equal(u.body.userId, 'alice');
    assert.equal(u.body.expirationDate, null);
    const upd = await call('PATCH', `${E}/entitlements/v2/${u.body.id}`, {
      expirationDate: '2030-01-01T00:00:00.000Z',
    });
    assert.equal(upd.body.expirationDate, '2030-01-01T00:00:00.000Z');
    // expirationDate is optional on PATCH (routes.md): left out, the entitlement no longer expires.
    const cleared = await call('PATCH', `${E}/entitlements/v2/${u.body.id}`, {});
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.expirationDate, null);
    assert.equal((await call('PATCH', `${E}/entitlements/v2/${u.body.id}`, { expirationDate: 'soon' })).status, 400);
    assert.equal((await call('GET', `${E}/entitlements/v2/${u.body.id}`)).body.expirationDate, null);
    await call('PATCH', `${E}/entitlements/v2/${u.body.id}`, { expirationDate: '2031-01-01T00:00:00.000Z' });
    assert.equal(
      (await call('PATCH', `${E}/entitlements/v2/batch`, { entitlements: [{ id: u.body.id }] })).status,
      200,
    );
    assert.equal((await call('GET', `${E}/entitlements/v2/${u.body.id}`)).body.expirationDate, null);
    const batch = await call('POST', `${E}/entitlements/v2/batch`, {
      entitlements: [
        { planId: plan.id, tenantId: 'globex' },
        { planId: plan.id, tenantId: 'globex', userId: 'bob' },
      ],
    });
    assert.equal(batch.body.entitlementIds.length, 2);
    assert.equal((await call('GET', `${E}/entitlements/v2?tenantId=globex`)).body.items.length, 2);
    assert.equal((await call('GET', `${E}/entitlements/v2?assignLevel=USER`)).body.items.length, 2);
    assert.equal((await call('GET', `${E}/plans/v1/tenant/globex`)).body.items[0].id, plan.id);
    assert.equal(
      (await call('DELETE', `${E}/entitlements/v2/batch?ids=${batch.body.entitlementIds.join(',')}`)).status,
      200,
    );
    assert.equal((await call('GET', `${E}/entitlements/v2?tenantId=globex`)).body.items.length, 0);
    assert.equal((await call('DELETE', `${E}/entitlements/v2/${u.body.id}`)).status, 200);
    assert.equal((await call('GET', `${E}/entitlements/v2/${u.body.id}`)).status, 404);
  });

  test('feature flags and route rules; snapshot tuples', async () => {
    const feat = await call('POST', `${E}/features/v1`, { name: 'Beta', key: 'beta' });
    const rules = [
      {
        description: '',
        conditionLogic: 'and',
        treatment: 'true',
        conditions: [{ attribute: 'signup', op: 'on_or_after', value: { date: '2024-01-01T00:00:00Z' }, negate: true }],
      },
    ];
    const f = await call('POST', `${E}/feature-flags/v1`, {
      name: 'beta flag',
      featureId: feat.body.id,
      on: true,
      defaultTreatment: 'false',
      offTreatment: 'false',
      rules,
    });
    assert.equal(f.status, 200);
    assert.deepEqual(f.body.feature, { id: feat.body.id, key: 'beta', name: 'Beta' });
    assert.deepEqual(f.body.rules, rules);
    assert.equal(
      (
        await call('POST', `${E}/feature-flags/v1`, {
          name: 'again',
          featureId: feat.body.id,
          on: true,
          defaultTreatment: 'false',
          offTreatment: 'false',
        })
      ).status,
      409,
    );
    assert.equal(
      (
        await call('POST', `${E}/feature-flags/v1`, {
          name: 'x',
          featureId: feat.body.id,
          on: 'yes',
          defaultTreatment: 'false',
          offTreatment: 'false',
        })
      ).status,
      400,
    );
    assert.equal(
      (await call('PATCH', `${E}/feature-flags/v1/${f.body.id}`, { rules: [{ treatment: 'maybe', conditions: [] }] }))
        .status,
      400,
    );
    // A pattern with nested repetition could stall the agent on a crafted attribute: refused when saved.
    const redos = await call('PATCH', `${E}/feature-flags/v1/${f.body.id}`, {
      rules: [
        {
          treatment: 'true',
          conditionLogic: 'and',
          conditions: [{ attribute: 'email', op: 'matches', value: { string: '^(a+)+$' } }],
        },
      ],
    });
    assert.equal(redos.status, 400, JSON.stringify(redos.body));
    assert.match(redos.body.errors[0], /repeats a group/);
    assert.equal((await call('PATCH', `${E}/feature-flags/v1/${f.body.id}`, { on: false })).body.on, false);

    const r1 = await call('POST', `${E}/routes/v1`, {
      method: 'GET',
      path: '/api/a',
      policyType: 'allow',
      description: 'a',
    });
    const r2 = await call('POST', `${E}/routes/v1`, {
      method: '*',
      path: '/api/*',
      policyType: 'ruleBased',
      description: 'b',
      rules: [{ type: 'permission', value: 'api.use' }],
    });
    assert.equal(r1.body.priority, 1);
    assert.equal(r2.body.priority, 2, 'next free number');
    assert.equal(r2.body.rules[0].routeId, r2.body.id);
    assert.equal(
      (await call('POST', `${E}/routes/v1`, { method: 'GET', path: '/api/a', policyType: 'deny', description: '' }))
        .status,
      409,
    );
    assert.equal(
      (await call('POST', `${E}/routes/v1`, { method: 'FETCH', path: '/x', policyType: 'deny', description: '' }))
        .status,
      400,
    );
    assert.equal(
      (
        await call('POST', `${E}/routes/v1`, {
          method: 'GET',
          path: '/x',
          policyType: 'ruleBased',
          rules: [{ type: 'role', value: 'x' }],
        })
      ).status,
      400,
    );
    const rr = await call('PUT', `${E}/routes/v1/${r2.body.id}/rules`, { rules: [{ type: 'feature', value: 'beta' }] });
    assert.deepEqual(
      rr.body.map((x: any) => [x.type, x.value]),
      [['feature', 'beta']],
    );
    assert.equal((await call('PATCH', `${E}/routes/v1/${r1.body.id}`, { priority: 5 })).body.priority, 5);
    assert.deepEqual(
      (await call('GET', `${E}/routes/v1`)).body.map((r: any) => r.path),
      ['/api/*', '/api/a'],
    );
    assert.equal(
      (await call('PATCH', `${E}/routes/v1/configuration`, { accessControlMode: 'monitor' })).body.accessControlMode,
      'monitor',
    );
    assert.equal((await call('GET', `${E}/routes/v1/configuration`)).body.accessControlMode, 'monitor');
    assert.equal((await call('PATCH', `${E}/routes/v1/configuration`, { accessControlMode: 'audit' })).status, 400);

    const before = await offset();
    const s = await call('GET', '/entitlements/api/v1/vendor-entitlements');
    assert.equal(s.status, 200);
    assert.equal(s.body.snapshotOffset, before);
    const d = s.body.data;
    assert.deepEqual(Object.keys(d).sort(), [
      'entitlements',
      'featureBundles',
      'featureFlags',
      'features',
      'routes',
      'routesMode',
    ]);
    assert.ok(d.features.some((x: any) => x[0] === feat.body.id && x[1] === 'beta' && Array.isArray(x[2])));
    const plan = (await call('GET', `${E}/plans/v1`)).body.items[0];
    assert.deepEqual(d.featureBundles.find((x: any) => x[0] === plan.id).slice(0, 3), [
      plan.id,
      plan.features.map((x: any) => x.id),
      'true',
    ]);
    const grant = d.entitlements.find((x: any) => x[1] === 'acme');
    assert.equal(grant[0], plan.id);
    assert.equal(grant[2], null);
    assert.match(grant[3], /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(d.featureFlags, [['beta', false, 'boolean', 'false', 'false', rules]]);
    assert.deepEqual(
      d.routes.map((r: any) => [r[1], r[2], r[3], r[4], r[5]]),
      [
        ['*', '/api/*', 2, 'ruleBased', [['feature', 'beta']]],
        ['GET', '/api/a', 5, 'allow', []],
      ],
    );
    assert.equal(d.routesMode, 'monitor');

    // Removing an account removes its grants (and bumps the offset).
    await call('DELETE', '/tenants/resources/tenants/v1/acme');
    assert.ok((await offset()) > before);
    assert.equal(
      (await call('GET', '/entitlements/api/v1/vendor-entitlements')).body.data.entitlements.filter(
        (x: any) => x[1] === 'acme',
      ).length,
      0,
    );
  });

  test('server-side decision route: malformed input answered {code, message}', async () => {
    const D = '/entitlements/api/v1/decisions';
    const bad = await call('POST', `${D}/features`, {
      input: { subjectContext: {}, requestContext: { featureKey: 'x' } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_parameter');
    assert.match(bad.body.message, /tenantId/);
    const raw = await t.call('POST', `${D}/features`, {
      token,
      raw: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400);
    assert.equal(raw.body.code, 'invalid_parameter');
    assert.equal((await t.call('POST', `${D}/features`, { body: {} })).status, 401);
    assert.equal((await call('POST', `${D}/colors`, {})).status, 400);
    const ok = await call('POST', `${D}/features?metrics=true`, {
      input: { subjectContext: { tenantId: 'nobody' }, requestContext: { featureKey: 'nothing' } },
    });
    assert.equal(ok.status, 200);
    assert.match(ok.body.decision_id, /^[0-9a-f-]{36}$/);
    assert.ok(ok.body.metrics.timer_server_handler_ns > 0);
    assert.deepEqual(ok.body.result, { result: false, justification: 'MISSING_FEATURE' });
  });

  test('assign-on-signup plans are granted to new accounts, sub-accounts and migrated accounts (offset bumped)', async () => {
    const D = '/entitlements/api/v1/decisions/features';
    const feat = await call('POST', `${E}/features/v1`, { name: 'Starter kit', key: 'starter-kit' });
    const other = await call('POST', `${E}/features/v1`, { name: 'Enterprise kit', key: 'enterprise-kit' });
    const starter = await call('POST', `${E}/plans/v1`, {
      name: 'Starter',
      featureKeys: ['starter-kit'],
      assignOnSignup: true,
      defaultTimeLimitation: 14,
    });
    assert.equal(starter.status, 200);
    assert.equal(
      (
        await call('POST', `${E}/plans/v1`, {
          name: 'Enterprise',
          featureKeys: ['enterprise-kit'],
          assignOnSignup: false,
        })
      ).status,
      200,
    );
    assert.ok(feat.body.id && other.body.id);
    const grantOf = async (tenantId: string) => {
      const s = (await call('GET', '/entitlements/api/v1/vendor-entitlements')).body;
      return {
        offset: s.snapshotOffset as number,
        grant: s.data.entitlements.find((x: any) => x[0] === starter.body.id && x[1] === tenantId),
      };
    };
    const decide = async (tenantId: string, featureKey: string) =>
      (await call('POST', D, { input: { subjectContext: { tenantId }, requestContext: { featureKey } } })).body.result;

    const o0 = await offset();
    await account(t, { id: 'signup-co', name: 'Signup Co' });
    const { offset: o1, grant } = await grantOf('signup-co');
    assert.ok(o1 > o0, 'account creation with a signup plan bumps the offset');
    assert.ok(grant, 'the snapshot carries the signup grant');
    assert.equal(grant[2], null, 'an account-level grant');
    const days = (Date.parse(grant[3]) - Date.now()) / 86_400_000;
    assert.ok(days > 13.9 && days <= 14, `the plan's default time limitation sets the expiry (${days} days)`);
    assert.deepEqual(await decide('signup-co', 'starter-kit'), { result: true });
    assert.equal(
      (await decide('signup-co', 'enterprise-kit')).result,
      false,
      'plans not marked assign-on-signup are not granted',
    );
    const listed = await call('GET', `${E}/entitlements/v2?tenantId=signup-co&planId=${starter.body.id}`);
    assert.equal(listed.body.items.length, 1);

    const sub = await call('POST', '/tenants/resources/sub-tenants/v1', {
      parentTenantId: 'signup-co',
      tenantId: 'signup-child',
      name: 'Child',
    });
    assert.equal(sub.status, 201, JSON.stringify(sub.body));
    assert.ok((await grantOf('signup-child')).grant, 'sub-accounts get signup plans too');

    const mig = await call('POST', '/tenants/resources/migrations/v1/tenants', {
      tenants: ['signup-migrated-1', { tenantId: 'signup-migrated-2', name: 'M2' }, 'signup-co'],
    });
    assert.equal(mig.status, 202, JSON.stringify(mig.body));
    const id = mig.body.migrationId;
    const deadline = Date.now() + 15_000;
    while ((await call('GET', `/tenants/resources/migrations/v1/tenants/status/${id}`)).body.state !== 'completed') {
      assert.ok(Date.now() < deadline, 'migration completes');
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const t of ['signup-migrated-1', 'signup-migrated-2'])
      assert.equal((await decide(t, 'starter-kit')).result, true, t);
    const all = (await call('GET', '/entitlements/api/v1/vendor-entitlements')).body.data.entitlements.filter(
      (x: any) => x[0] === starter.body.id && x[1] === 'signup-co',
    );
    assert.equal(all.length, 1, 'an account that was live already is not granted twice');
  });

  for (const table of loadTables()) {
    test(`server-side decision route runs decision table ${table.file}`, async () => {
      await clearEntitlements(call);
      await applyTable(call, table, async (id) => {
        const r = await call('POST', '/tenants/resources/tenants/v1', { tenantId: id, name: id });
        assert.ok(r.status === 201 || r.body.errorCode === 'GH-30002', JSON.stringify(r.body));
      });
      for (const c of table.cases) {
        const r = await call('POST', `/entitlements/api/v1/decisions/${KIND_PATH[c.kind]}`, requestBody(c));
        assert.equal(r.status, 200, c.name);
        assert.deepEqual(r.body.result, c.expect, `${table.file}: ${c.name}`);
      }
    });
  }
});
