import type { Db } from '../src/storage/db.ts';
import type { Sizes } from './agent-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// Data: seeded by SQL straight into the entitlement tables (not measured).

const RULES_ENTERPRISE = JSON.stringify([
  {
    description: 'enterprise tier',
    conditionLogic: 'and',
    treatment: 'true',
    conditions: [{ attribute: 'tier', op: 'in_list', value: { list: ['enterprise'] }, negate: false }],
  },
]);
const RULES_FLAG = JSON.stringify([
  {
    description: 'beta testers',
    conditionLogic: 'and',
    treatment: 'true',
    conditions: [
      { attribute: 'beta', op: 'is', value: { boolean: true }, negate: false },
      { attribute: 'seats', op: 'greater_than', value: { number: 10 }, negate: false },
    ],
  },
  {
    description: 'internal',
    conditionLogic: 'and',
    treatment: 'true',
    conditions: [{ attribute: 'email', op: 'ends_with', value: { list: ['@gatehouse.example'] }, negate: false }],
  },
]);

export const PROBE = { tenant: 'probe-account', feature: 'probe-feature', plan: 'Probe plan' };

/**
 * `accounts` accounts acct-1..N; `features` features feature-j, each linked to perm-j.read and perm-j.write; plans
 * "Plan i" each bundling every feature j with j % plans = i % plans plus feature-1..3, a quarter of them with a
 * targeting rule, a third with a 30-day default limit; `grants` grants spread 5 per account over distinct plans (k = 3, 4
 * to a user of the account), one in five expired, one in five expiring in the future; flags on the first features
 * with two rules; route rules over /api/v1/resource-j/{id}. Plus the probe account/feature/plan of the propagation runs.
 */
export async function seed(db: Db, s: Sizes): Promise<{ offset: number; ms: number }> {
  const t0 = performance.now();
  const per = Math.ceil(s.grants / s.accounts);
  await db.query(
    `INSERT INTO tenants (tenant_id, id, name) SELECT 'acct-' || i, md5('agent-acct-' || i)::uuid, 'Account ' || i FROM generate_series(1, ${s.accounts}) i`,
  );
  await db.query(`INSERT INTO tenants (tenant_id, id, name) VALUES ($1, md5('probe')::uuid, 'Probe')`, [PROBE.tenant]);
  await db.query(`INSERT INTO entitlement_features (id, key, name, permissions)
    SELECT md5('f' || j)::uuid, 'feature-' || j, 'Feature ' || j, ARRAY['perm-' || j || '.read', 'perm-' || j || '.write'] FROM generate_series(1, ${s.features}) j`);
  await db.query(
    `INSERT INTO entitlement_features (id, key, name) VALUES (md5('probe-f')::uuid, $1, 'Probe feature')`,
    [PROBE.feature],
  );
  await db.query(
    `INSERT INTO entitlement_plans (id, name, default_treatment, rules, default_time_limitation)
    SELECT md5('p' || i)::uuid, 'Plan ' || i, 'false', CASE WHEN i % 4 = 0 THEN $1::jsonb ELSE '[]'::jsonb END, CASE WHEN i % 3 = 0 THEN 30 END
      FROM generate_series(1, ${s.plans}) i`,
    [RULES_ENTERPRISE],
  );
  await db.query(`INSERT INTO entitlement_plans (id, name) VALUES (md5('probe-p')::uuid, $1)`, [PROBE.plan]);
  await db.query(`INSERT INTO entitlement_plan_features (plan_id, feature_id)
    SELECT md5('p' || i)::uuid, md5('f' || j)::uuid FROM generate_series(1, ${s.plans}) i, generate_series(1, ${s.features}) j
     WHERE j % ${s.plans} = i % ${s.plans} OR j <= 3`);
  await db.query(
    `INSERT INTO entitlement_plan_features (plan_id, feature_id) VALUES (md5('probe-p')::uuid, md5('probe-f')::uuid)`,
  );
  // Grant g (0-based): account t = g % accounts, its k-th grant (k = g / accounts) of plan (t + 3k) % plans.
  await db.query(`INSERT INTO entitlement_grants (tenant_id, id, plan_id, user_id, expiration_date)
    SELECT 'acct-' || (1 + g % ${s.accounts}), md5('g' || g)::uuid, md5('p' || (1 + ((g % ${s.accounts}) + 3 * (g / ${s.accounts})) % ${s.plans}))::uuid,
           CASE WHEN g / ${s.accounts} >= 3 THEN 'user-' || (g / ${s.accounts}) END,
           CASE WHEN g % 5 = 0 THEN now() - interval '3 days' WHEN g % 5 = 1 THEN now() + interval '300 days' END
      FROM generate_series(0, ${s.grants - 1}) g WHERE g / ${s.accounts} < ${Math.min(per, s.plans)}`);
  await db.query(
    `INSERT INTO entitlement_feature_flags (id, feature_id, name, "on", default_treatment, off_treatment, rules)
    SELECT md5('ff' || j)::uuid, md5('f' || j)::uuid, 'flag ' || j, j % 3 <> 0, 'false', 'false', $1::jsonb FROM generate_series(1, ${s.flags}) j`,
    [RULES_FLAG],
  );
  await db.query(`INSERT INTO entitlement_routes (id, method, path, priority, policy_type, rules)
    SELECT md5('r' || i)::uuid, (ARRAY['GET', 'POST', 'PUT', 'DELETE'])[1 + i % 4], '/api/v1/resource-' || i || '/{id}', i,
           CASE WHEN i % 10 = 0 THEN 'deny' WHEN i % 5 = 0 THEN 'allow' ELSE 'ruleBased' END,
           CASE WHEN i % 5 = 0 THEN '[]'::jsonb ELSE jsonb_build_array(
             jsonb_build_object('id', md5('rr' || i)::uuid, 'type', 'permission', 'value', 'perm-' || (1 + i % ${s.features}) || '.read'),
             jsonb_build_object('id', md5('rf' || i)::uuid, 'type', 'feature', 'value', 'feature-' || (1 + i % ${s.features}))) END
      FROM generate_series(1, ${s.routes}) i`);
  await db.query(
    `INSERT INTO entitlement_routes (id, method, path, priority, policy_type) VALUES (md5('public')::uuid, '*', '/public/*', ${s.routes + 1}, 'allow')`,
  );
  const { rows } = await db.query<{ n: string }>(
    'UPDATE entitlement_settings SET snapshot_offset = snapshot_offset + 1 WHERE id = 1 RETURNING snapshot_offset AS n',
  );
  return { offset: Number(rows[0].n), ms: performance.now() - t0 };
}

export async function counts(db: Db) {
  const q = async (t: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
  return {
    accounts: await q('tenants'),
    features: await q('entitlement_features'),
    plans: await q('entitlement_plans'),
    grants: await q('entitlement_grants'),
    flags: await q('entitlement_feature_flags'),
    routes: await q('entitlement_routes'),
  };
}
