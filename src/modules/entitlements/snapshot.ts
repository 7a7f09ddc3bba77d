import type { Db } from '../../storage/db.ts';
import {
  compile,
  parseDecisionRequest,
  type DecisionKind,
  type Engine,
  type Parsed,
  type Rule,
  type Snapshot,
  type RouteTuple,
} from './engine/index.ts';
import * as store from './store.ts';

/**
 * The snapshot the agent pulls (wire.md section 7), read consistently: the settings row is share-locked first, so no
 * write can commit between reading the offset and reading the rows (every write bumps that row).
 */
export async function buildSnapshot(db: Db): Promise<Snapshot> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<store.SettingsRow>(
      'SELECT routes_mode, snapshot_offset FROM entitlement_settings WHERE id = 1 FOR SHARE',
    );
    const features = await store.features(tx);
    const plans = await store.plans(tx);
    const grants = await store.grants(tx);
    const flags = await store.flags(tx);
    const routes = await store.routes(tx);
    return {
      snapshotOffset: Number(rows[0].snapshot_offset),
      data: {
        features: features.map((f) => [f.id, f.key, f.permissions]),
        featureBundles: plans.map((p) => [p.id, p.feature_ids, p.default_treatment, p.rules as Rule[]]),
        entitlements: grants.map((g) => [
          g.plan_id,
          g.tenant_id,
          g.user_id,
          g.expiration_date ? g.expiration_date.toISOString() : null,
        ]),
        featureFlags: flags.map((f) => [
          f.feature_key,
          f.on,
          'boolean',
          f.default_treatment,
          f.off_treatment,
          f.rules as Rule[],
        ]),
        routes: routes.map(
          (r): RouteTuple => [
            r.id,
            r.method as RouteTuple[1],
            r.path,
            r.priority,
            r.policy_type as RouteTuple[4],
            r.rules.map((x) => [x.type, x.value] as RouteTuple[5][number]),
          ],
        ),
        routesMode: rows[0].routes_mode,
      },
    };
  });
}

export async function snapshotOffset(db: Db): Promise<number> {
  return (await store.settings(db)).snapshot_offset;
}

/**
 * Server-side decisions for apps that cannot run the agent: the same engine over the same snapshot, recompiled only
 * when the offset moved (one small read per decision).
 */
export function createServerDecisions(db: Db) {
  let cached: { offset: number; engine: Engine } | undefined;
  let building: Promise<{ offset: number; engine: Engine }> | undefined;
  async function engine(): Promise<Engine> {
    const offset = await snapshotOffset(db);
    if (cached && cached.offset === offset) return cached.engine;
    building ??= buildSnapshot(db)
      .then((s) => ({ offset: s.snapshotOffset, engine: compile(s.data) }))
      .finally(() => {
        building = undefined;
      });
    cached = await building;
    return cached.engine;
  }
  return {
    async decide(kind: DecisionKind, body: unknown): Promise<Parsed & { decision?: ReturnType<Engine['decide']> }> {
      const parsed = parseDecisionRequest(kind, body);
      if (!parsed.ok) return parsed;
      return { ...parsed, decision: (await engine()).decide(kind, parsed.input) };
    },
  };
}
