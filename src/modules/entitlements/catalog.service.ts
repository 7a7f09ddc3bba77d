import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { FeatureInput, FlagInput, ListQuery, PlanInput } from './schema.ts';
import {
  featureDto,
  flagDto,
  metadataObject,
  normaliseRules,
  page,
  planDto,
  write,
  type EntitlementsDeps,
} from './records.ts';
import * as store from './store.ts';

/** Features, plans and feature flags. */
export function createCatalogService({ db, vendorId }: EntitlementsDeps) {
  const featureExists = (key: string) => new AppError('FEATURE_KEY_EXISTS', `A feature with key ${key} already exists`);

  async function requireFeature(q = db, id: string) {
    const [row] = store.isId(id) ? await store.features(q, { ids: [id] }) : [];
    if (!row) throw new AppError('FEATURE_NOT_FOUND', `No feature with id ${id}`);
    return row;
  }
  async function requirePlan(q = db, id: string) {
    const [row] = store.isId(id) ? await store.plans(q, { ids: [id] }) : [];
    if (!row) throw new AppError('PLAN_NOT_FOUND', `No plan with id ${id}`);
    return row;
  }
  async function requireFlag(q = db, id: string) {
    const [row] = store.isId(id) ? await store.flags(q, { ids: [id] }) : [];
    if (!row) throw new AppError('FEATURE_FLAG_NOT_FOUND', `No feature flag with id ${id}`);
    return row;
  }
  async function featureIdsOf(q = db, keys?: string[], ids?: string[]): Promise<string[]> {
    const found = keys ? await store.features(q, { keys }) : await store.features(q, { ids: ids ?? [] });
    const have = new Set(found.flatMap((f) => [f.key, f.id]));
    const missing = (keys ?? ids ?? []).filter((k) => !have.has(k));
    if (missing.length)
      throw new AppError('FEATURE_NOT_FOUND', `Unknown feature ${keys ? 'keys' : 'ids'}: ${missing.join(', ')}`);
    return found.map((f) => f.id);
  }
  async function planOut(q = db, row: store.PlanRow) {
    const feats = await store.features(q, { ids: row.feature_ids });
    return planDto(row, vendorId(), new Map(feats.map((f) => [f.id, f])));
  }
  const featureCols = (b: FeatureInput) => ({
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.key !== undefined ? { key: b.key } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.metadata !== undefined ? { metadata: metadataObject(b.metadata) } : {}),
    ...(b.permissions !== undefined ? { permissions: [...new Set(b.permissions)] } : {}),
  });
  const planCols = (b: PlanInput) => ({
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.metadata !== undefined ? { metadata: metadataObject(b.metadata) } : {}),
    ...(b.defaultTreatment !== undefined ? { default_treatment: b.defaultTreatment } : {}),
    ...(b.rules !== undefined ? { rules: normaliseRules(b.rules) } : {}),
    ...(b.defaultTimeLimitation !== undefined ? { default_time_limitation: b.defaultTimeLimitation } : {}),
    ...(b.assignOnSignup !== undefined ? { assign_on_signup: b.assignOnSignup } : {}),
  });
  const flagCols = (b: FlagInput) => ({
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.metadata !== undefined
      ? { metadata: typeof b.metadata === 'string' ? b.metadata : JSON.stringify(b.metadata) }
      : {}),
    ...(b.on !== undefined ? { on: b.on } : {}),
    ...(b.defaultTreatment !== undefined ? { default_treatment: b.defaultTreatment } : {}),
    ...(b.offTreatment !== undefined ? { off_treatment: b.offTreatment } : {}),
    ...(b.rules !== undefined ? { rules: normaliseRules(b.rules) } : {}),
  });
  const empty = (o: object) => {
    if (Object.keys(o).length === 0) throw new AppError('VALIDATION', 'The body must set at least one field');
  };

  return {
    requireFeature,
    requirePlan,
    // -- features --
    async listFeatures(q: ListQuery) {
      const limit = q.limit ?? 50;
      const rows = await store.features(db, {
        filter: q.filter,
        limit: limit + 1,
        offset: q.offset ?? 0,
        desc: q.sortType === 'DESC',
      });
      const flags = new Map((await store.flags(db)).map((f) => [f.feature_id, f]));
      const p = page(rows, limit);
      return { items: p.items.map((r) => featureDto(r, vendorId(), flags.get(r.id))), hasNext: p.hasNext };
    },
    async getFeature(id: string) {
      const row = await requireFeature(db, id);
      const flag = (await store.flags(db)).find((f) => f.feature_id === row.id);
      return featureDto(row, vendorId(), flag);
    },
    async createFeature(body: FeatureInput) {
      const id = newId();
      await write(
        db,
        (tx) => store.insertRow(tx, 'entitlement_features', { id, ...featureCols(body) }),
        () => featureExists(body.key!),
      );
      return featureDto(await requireFeature(db, id), vendorId());
    },
    async updateFeature(id: string, body: FeatureInput) {
      const cols = featureCols(body);
      empty(cols);
      await write(
        db,
        async (tx) => {
          if (!(store.isId(id) && (await store.updateRow(tx, 'entitlement_features', id, cols))))
            await requireFeature(tx, id);
        },
        () => featureExists(body.key!),
      );
      return featureDto(await requireFeature(db, id), vendorId());
    },
    async removeFeature(id: string) {
      await write(db, async (tx) => {
        if (!(store.isId(id) && (await store.deleteRow(tx, 'entitlement_features', id)))) await requireFeature(tx, id);
      });
    },
    // -- plans --
    async listPlans(q: ListQuery) {
      const limit = q.limit ?? 50;
      const rows = await store.plans(db, {
        filter: q.filter,
        limit: limit + 1,
        offset: q.offset ?? 0,
        desc: q.sortType === 'DESC',
      });
      const feats = new Map((await store.features(db)).map((f) => [f.id, f]));
      const p = page(rows, limit);
      return { items: p.items.map((r) => planDto(r, vendorId(), feats)), hasNext: p.hasNext };
    },
    async getPlan(id: string) {
      return planOut(db, await requirePlan(db, id));
    },
    async createPlan(body: PlanInput) {
      const id = newId();
      const cols = planCols(body);
      await write(
        db,
        async (tx) => {
          await store.insertRow(tx, 'entitlement_plans', { id, ...cols });
          if (body.featureKeys) await store.linkFeatures(tx, id, await featureIdsOf(tx, body.featureKeys));
        },
        () => new AppError('PLAN_NAME_EXISTS', `A plan named ${body.name} already exists`),
      );
      return planOut(db, await requirePlan(db, id));
    },
    async updatePlan(id: string, body: PlanInput) {
      const cols = planCols(body);
      if (body.featureKeys === undefined) empty(cols);
      await write(
        db,
        async (tx) => {
          await requirePlan(tx, id);
          if (Object.keys(cols).length) await store.updateRow(tx, 'entitlement_plans', id, cols);
          if (body.featureKeys) {
            const ids = await featureIdsOf(tx, body.featureKeys);
            await store.unlinkFeatures(tx, id, 'all');
            await store.linkFeatures(tx, id, ids);
          }
        },
        () => new AppError('PLAN_NAME_EXISTS', `A plan named ${body.name} already exists`),
      );
      return planOut(db, await requirePlan(db, id));
    },
    async removePlan(id: string) {
      await write(db, async (tx) => {
        if (!(store.isId(id) && (await store.deleteRow(tx, 'entitlement_plans', id)))) await requirePlan(tx, id);
      });
    },
    async planFeatures(id: string, q: ListQuery) {
      const plan = await requirePlan(db, id);
      const limit = q.limit ?? 50;
      const rows = await store.features(db, {
        ids: plan.feature_ids,
        filter: q.filter,
        limit: limit + 1,
        offset: q.offset ?? 0,
        desc: q.sortType === 'DESC',
      });
      const p = page(rows, limit);
      return {
        items: p.items.map((f) => ({ id: f.id, name: f.name, key: f.key, permissions: f.permissions })),
        hasNext: p.hasNext,
      };
    },
    async linkPlanFeatures(id: string, featureIds: string[], link: boolean) {
      await write(db, async (tx) => {
        await requirePlan(tx, id);
        const ids = await featureIdsOf(tx, undefined, [...new Set(featureIds)]);
        if (link) await store.linkFeatures(tx, id, ids);
        else await store.unlinkFeatures(tx, id, ids);
      });
      return planOut(db, await requirePlan(db, id));
    },
    // -- feature flags --
    async listFlags(q: ListQuery) {
      const limit = q.limit ?? 50;
      const rows = await store.flags(db, {
        filter: q.filter,
        limit: limit + 1,
        offset: q.offset ?? 0,
        desc: q.sortType === 'DESC',
      });
      const p = page(rows, limit);
      return { items: p.items.map(flagDto), hasNext: p.hasNext };
    },
    async getFlag(id: string) {
      return flagDto(await requireFlag(db, id));
    },
    async createFlag(body: FlagInput) {
      const id = newId();
      const cols = flagCols(body);
      await write(
        db,
        async (tx) => {
          await requireFeature(tx, body.featureId!);
          await store.insertRow(tx, 'entitlement_feature_flags', { id, feature_id: body.featureId, ...cols });
        },
        () => new AppError('FEATURE_FLAG_EXISTS', `Feature ${body.featureId} already has a feature flag`),
      );
      return flagDto(await requireFlag(db, id));
    },
    async updateFlag(id: string, body: FlagInput) {
      const cols = { ...flagCols(body), ...(body.featureId !== undefined ? { feature_id: body.featureId } : {}) };
      empty(cols);
      await write(
        db,
        async (tx) => {
          await requireFlag(tx, id);
          if (body.featureId !== undefined) await requireFeature(tx, body.featureId);
          await store.updateRow(tx, 'entitlement_feature_flags', id, cols);
        },
        () => new AppError('FEATURE_FLAG_EXISTS', `Feature ${body.featureId} already has a feature flag`),
      );
      return flagDto(await requireFlag(db, id));
    },
    async removeFlag(id: string) {
      await write(db, async (tx) => {
        if (!(store.isId(id) && (await store.deleteRow(tx, 'entitlement_feature_flags', id))))
          await requireFlag(tx, id);
      });
    },
  };
}
