import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError, errorBody } from '../../http/errors.ts';
import * as S from './schema.ts';
import type { EntitlementsService } from './service.ts';
import type { DecisionKind } from './engine/index.ts';
import { userEntitlementsRoutes } from './user-entitlements.ts';
import { rebacRoutes } from './rebac.routes.ts';

const R = '/entitlements/resources';
const tags = ['entitlements'];
const ok = async (reply: FastifyReply, p: Promise<unknown>) => {
  await p;
  return reply.status(200).send({});
};

/** Management API (routes.md "Entitlements management"), the snapshot for the agent and server-side decisions. */
export const entitlementsRoutes: FastifyPluginAsyncTypebox<{ entitlements: EntitlementsService }> = async (
  app,
  { entitlements: e },
) => {
  const { catalog, grants, routes } = e;
  await app.register(userEntitlementsRoutes, { entitlements: e });
  await app.register(rebacRoutes, { rebac: e.rebac });
  const c = guard.vendor;

  // -- features --
  app.get(
    `${R}/features/v1`,
    {
      config: c,
      schema: { tags, summary: 'List features', querystring: S.ListQuery, response: { 200: S.FeaturePage } },
    },
    (req) => catalog.listFeatures(req.query),
  );
  app.get(
    `${R}/features/v1/:featureId`,
    { config: c, schema: { tags, summary: 'Get a feature', params: S.FeatureParams, response: { 200: S.FeatureDto } } },
    (req) => catalog.getFeature(req.params.featureId),
  );
  app.post(
    `${R}/features/v1`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Create a feature (key unique)',
        body: S.CreateFeature,
        response: { 200: S.FeatureDto },
      },
    },
    (req) => catalog.createFeature(req.body),
  );
  app.patch(
    `${R}/features/v1/:featureId`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Update a feature',
        params: S.FeatureParams,
        body: S.UpdateFeature,
        response: { 200: S.FeatureDto },
      },
    },
    (req) => catalog.updateFeature(req.params.featureId, req.body),
  );
  const v2perm = (p?: { permissionKey?: string }[]) => p?.map((x) => x.permissionKey).filter((k): k is string => !!k);
  app.post(
    `${R}/features/v2`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Create a feature (permissions as objects)',
        body: S.CreateFeatureV2,
        response: { 200: S.FeatureDto },
      },
    },
    (req) => catalog.createFeature({ ...req.body, permissions: v2perm(req.body.permissions) }),
  );
  app.patch(
    `${R}/features/v2/:featureId`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Update a feature (permissions as objects)',
        params: S.FeatureParams,
        body: S.UpdateFeatureV2,
        response: { 200: S.FeatureDto },
      },
    },
    (req) => catalog.updateFeature(req.params.featureId, { ...req.body, permissions: v2perm(req.body.permissions) }),
  );
  for (const v of ['v1', 'v2']) {
    app.delete(
      `${R}/features/${v}/:featureId`,
      {
        config: c,
        schema: {
          tags,
          summary: 'Delete a feature (and its flag and plan links)',
          params: S.FeatureParams,
          response: { 200: S.Empty },
        },
      },
      (req, reply) => ok(reply, catalog.removeFeature(req.params.featureId)),
    );
  }

  // -- plans --
  app.get(
    `${R}/plans/v1`,
    { config: c, schema: { tags, summary: 'List plans', querystring: S.ListQuery, response: { 200: S.PlanPage } } },
    (req) => catalog.listPlans(req.query),
  );
  app.get(
    `${R}/plans/v1/tenant/:id`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Plans granted to an account',
        params: S.IdParams,
        querystring: S.ListQuery,
        response: { 200: S.PlanPage },
      },
    },
    async (req) => {
      const ids = await grants.tenantPlanIds(req.params.id);
      const items = await Promise.all(ids.map((id) => catalog.getPlan(id)));
      const offset = req.query.offset ?? 0;
      const limit = req.query.limit ?? 50;
      return { items: items.slice(offset, offset + limit), hasNext: items.length > offset + limit };
    },
  );
  app.post(
    `${R}/plans/v1`,
    { config: c, schema: { tags, summary: 'Create a plan', body: S.CreatePlan, response: { 200: S.PlanDto } } },
    (req) => catalog.createPlan(req.body),
  );
  app.get(
    `${R}/plans/v1/:id`,
    { config: c, schema: { tags, summary: 'Get a plan', params: S.IdParams, response: { 200: S.PlanDto } } },
    (req) => catalog.getPlan(req.params.id),
  );
  app.patch(
    `${R}/plans/v1/:id`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Update a plan (featureKeys replaces its features)',
        params: S.IdParams,
        body: S.UpdatePlan,
        response: { 200: S.PlanDto },
      },
    },
    (req) => catalog.updatePlan(req.params.id, req.body),
  );
  app.delete(
    `${R}/plans/v1/:id`,
    {
      config: c,
      schema: { tags, summary: 'Delete a plan and its grants', params: S.IdParams, response: { 200: S.Empty } },
    },
    (req, reply) => ok(reply, catalog.removePlan(req.params.id)),
  );
  app.get(
    `${R}/plans/v1/:id/features`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Features of a plan',
        params: S.IdParams,
        querystring: S.ListQuery,
        response: { 200: S.PlanFeaturePage },
      },
    },
    (req) => catalog.planFeatures(req.params.id, req.query),
  );
  app.patch(
    `${R}/plans/v1/:id/features/link`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Link features to a plan',
        params: S.IdParams,
        body: S.LinkFeatures,
        response: { 200: S.PlanDto },
      },
    },
    (req) => catalog.linkPlanFeatures(req.params.id, req.body.featuresIds, true),
  );
  app.patch(
    `${R}/plans/v1/:id/features/unlink`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Unlink features from a plan',
        params: S.IdParams,
        body: S.LinkFeatures,
        response: { 200: S.PlanDto },
      },
    },
    (req) => catalog.linkPlanFeatures(req.params.id, req.body.featuresIds, false),
  );

  // -- entitlements (grants) --
  const G = `${R}/entitlements/v2`;
  app.get(
    G,
    {
      config: c,
      schema: {
        tags,
        summary: 'List entitlements',
        querystring: S.GrantListQuery,
        response: { 200: S.EntitlementPage },
      },
    },
    (req) => grants.list(req.query),
  );
  app.post(
    G,
    {
      config: c,
      schema: {
        tags,
        summary: 'Grant a plan to an account or one user of it',
        body: S.CreateGrant,
        response: { 200: S.EntitlementDto },
      },
    },
    (req) => grants.create(req.body),
  );
  app.post(
    `${G}/batch`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Grant plans in one transaction',
        body: S.BatchCreateGrants,
        response: { 200: S.EntitlementIds },
      },
    },
    (req) => grants.createBatch(req.body.entitlements),
  );
  app.patch(
    `${G}/batch`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Change expiry dates in one transaction',
        body: S.BatchUpdateGrants,
        response: { 200: S.Empty },
      },
    },
    (req, reply) =>
      ok(
        reply,
        grants.updateBatch(req.body.entitlements.map((e) => ({ id: e.id, expirationDate: e.expirationDate ?? null }))),
      ),
  );
  app.delete(
    `${G}/batch`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Delete entitlements in one transaction',
        querystring: S.BatchDeleteQuery,
        response: { 200: S.Empty },
      },
    },
    (req, reply) => {
      const ids = Array.isArray(req.query.ids)
        ? req.query.ids
        : req.query.ids
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
      return ok(reply, grants.removeBatch(ids));
    },
  );
  app.get(
    `${G}/:id`,
    {
      config: c,
      schema: { tags, summary: 'Get an entitlement', params: S.IdParams, response: { 200: S.EntitlementDto } },
    },
    (req) => grants.get(req.params.id),
  );
  app.patch(
    `${G}/:id`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Change the expiry of an entitlement',
        params: S.IdParams,
        body: S.UpdateGrant,
        response: { 200: S.EntitlementDto },
      },
    },
    (req) => grants.update(req.params.id, req.body.expirationDate ?? null),
  );
  app.delete(
    `${G}/:id`,
    { config: c, schema: { tags, summary: 'Delete an entitlement', params: S.IdParams, response: { 200: S.Empty } } },
    (req, reply) => ok(reply, grants.remove(req.params.id)),
  );

  // -- feature flags --
  const F = `${R}/feature-flags/v1`;
  app.get(
    F,
    {
      config: c,
      schema: { tags, summary: 'List feature flags', querystring: S.ListQuery, response: { 200: S.FeatureFlagPage } },
    },
    (req) => catalog.listFlags(req.query),
  );
  app.post(
    F,
    {
      config: c,
      schema: {
        tags,
        summary: 'Create the feature flag of a feature',
        body: S.CreateFlag,
        response: { 200: S.FeatureFlagDto },
      },
    },
    (req) => catalog.createFlag(req.body),
  );
  app.get(
    `${F}/:id`,
    {
      config: c,
      schema: { tags, summary: 'Get a feature flag', params: S.IdParams, response: { 200: S.FeatureFlagDto } },
    },
    (req) => catalog.getFlag(req.params.id),
  );
  app.patch(
    `${F}/:id`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Update a feature flag',
        params: S.IdParams,
        body: S.UpdateFlag,
        response: { 200: S.FeatureFlagDto },
      },
    },
    (req) => catalog.updateFlag(req.params.id, req.body),
  );
  app.delete(
    `${F}/:id`,
    { config: c, schema: { tags, summary: 'Delete a feature flag', params: S.IdParams, response: { 200: S.Empty } } },
    (req, reply) => ok(reply, catalog.removeFlag(req.params.id)),
  );

  // -- route rules --
  const RT = `${R}/routes/v1`;
  app.get(
    `${RT}/configuration`,
    { config: c, schema: { tags, summary: 'Routes mode', response: { 200: S.RoutesConfigDto } } },
    () => routes.getConfig(),
  );
  app.patch(
    `${RT}/configuration`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Set the routes mode (guard | monitor)',
        body: S.RoutesConfig,
        response: { 200: S.RoutesConfigDto },
      },
    },
    (req) => routes.setConfig(req.body.accessControlMode),
  );
  app.get(
    RT,
    { config: c, schema: { tags, summary: 'List route rules in decision order', response: { 200: S.RouteList } } },
    () => routes.list(),
  );
  app.post(
    RT,
    {
      config: c,
      schema: {
        tags,
        summary: 'Create a route rule (no priority: the next free number)',
        body: S.CreateRoute,
        response: { 200: S.RouteDto },
      },
    },
    (req) => routes.create(req.body),
  );
  app.get(
    `${RT}/:id`,
    { config: c, schema: { tags, summary: 'Get a route rule', params: S.IdParams, response: { 200: S.RouteDto } } },
    (req) => routes.get(req.params.id),
  );
  app.patch(
    `${RT}/:id`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Update a route rule',
        params: S.IdParams,
        body: S.UpdateRoute,
        response: { 200: S.RouteDto },
      },
    },
    (req) => routes.update(req.params.id, req.body),
  );
  app.delete(
    `${RT}/:id`,
    { config: c, schema: { tags, summary: 'Delete a route rule', params: S.IdParams, response: { 200: S.Empty } } },
    (req, reply) => ok(reply, routes.remove(req.params.id)),
  );
  app.post(
    `${RT}/import-open-api`,
    {
      config: c,
      schema: {
        tags,
        summary:
          'Create route rules from an OpenAPI 3.x / Swagger 2.0 document (x-gatehouse-policy, x-gatehouse-rules per operation)',
        querystring: S.ImportOpenApiQuery,
        body: Type.Object({}, { additionalProperties: true }),
        response: { 200: S.ImportOpenApiAnswer },
      },
    },
    (req) => e.importOpenApi(req.body, req.query.defaultPolicyType),
  );
  app.put(
    `${RT}/:id/rules`,
    {
      config: c,
      schema: {
        tags,
        summary: 'Replace the rules of a route',
        params: S.IdParams,
        body: S.ReplaceRouteRules,
        response: { 200: S.RouteRuleList },
      },
    },
    (req) => routes.replaceRules(req.params.id, req.body.rules),
  );

  // -- snapshot (the agent's feed) --
  // Documented by its schema but serialised with JSON.stringify: the tuples are exactly the engine's, and the large
  // snapshot's fetch time has a target (no per-item schema walk).
  app.get(
    '/entitlements/api/v1/vendor-entitlements',
    {
      config: c,
      schema: { tags, summary: 'The entitlements snapshot the agent loads', response: { 200: S.SnapshotDto } },
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async () => (await e.snapshot()) as unknown as S.SnapshotDto,
  ); // engine tuple types; JSON.stringify serialises it
  app.get(
    '/entitlements/api/v1/vendor-entitlements-snapshot-offset',
    { config: c, schema: { tags, summary: 'The current snapshot offset', response: { 200: S.SnapshotOffsetDto } } },
    async () => ({ snapshotOffset: await e.snapshotOffset() }),
  );

  // -- server-side decisions: the agent's payloads and answers, for apps that cannot run the agent --
  const KIND: Record<string, DecisionKind> = { features: 'feature', permissions: 'permission', routes: 'route' };
  app.post(
    '/entitlements/api/v1/decisions/:kind',
    {
      config: c,
      schema: {
        tags,
        summary: 'Decide like the agent (body {input: {subjectContext, requestContext}})',
        params: S.DecisionKindParams,
        response: { 200: S.DecisionAnswer, 400: S.DecisionInputError },
      },
      // Body errors in the policy engine's style; guard and other errors keep the wire body.
      errorHandler: (err: FastifyError | AppError, _req, reply: FastifyReply) => {
        if (err instanceof AppError) return reply.status(err.status).send(errorBody(err));
        if ((err as FastifyError).statusCode === 415)
          return reply
            .status(400)
            .send({ code: 'invalid_parameter', message: 'request body must be application/json' });
        if ((err as FastifyError).statusCode && (err as FastifyError).statusCode! < 500)
          return reply.status(400).send({ code: 'invalid_parameter', message: 'request body is not valid JSON' });
        throw err;
      },
    },
    async (req, reply) => {
      const started = process.hrtime.bigint();
      const r = await e.decisions.decide(KIND[req.params.kind], req.body);
      if (!r.ok) return reply.status(400).send(r.error);
      const metrics =
        (req.query as Record<string, string>).metrics === 'true'
          ? { timer_server_handler_ns: Number(process.hrtime.bigint() - started) }
          : {};
      return { decision_id: randomUUID(), metrics, result: r.decision! };
    },
  );
};
