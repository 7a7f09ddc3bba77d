import { Type, type Static, type TSchema } from 'typebox';

/** Management API bodies and queries (routes.md, "Entitlements management"). Rule shapes are checked by the service. */
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Key = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s]+$' });
const Description = Type.String({ maxLength: 4096 });
const Treatment = Type.Union([Type.Literal('true'), Type.Literal('false')]);
const Metadata = Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ maxLength: 65536 })]);
/** Targeting rules `{description, conditionLogic: 'and', conditions: [{attribute, op, value, negate}], treatment}`. */
const Rules = Type.Array(Type.Unknown(), {
  maxItems: 100,
  description: 'targeting rules; conditions are checked per operator',
});
const PermissionKeys = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 500 });
const Ids = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000 });
const DateTime = Type.String({ format: 'date-time' });

export const ListQuery = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'items to skip' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  filter: Type.Optional(Type.String({ maxLength: 255 })),
  sortType: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')])),
});
export type ListQuery = Static<typeof ListQuery>;
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const FeatureParams = Type.Object({ featureId: Type.String({ minLength: 1, maxLength: 64 }) });

const featureFields = { name: Name, key: Key, description: Description, metadata: Metadata };
export const CreateFeature = Type.Object({
  ...featureFields,
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
  permissions: Type.Optional(PermissionKeys),
});
export const UpdateFeature = Type.Partial(Type.Object({ ...featureFields, permissions: PermissionKeys }));
const PermissionRef = Type.Object({
  permissionKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  permissionId: Type.Optional(Type.String({ maxLength: 64 })),
});
export const CreateFeatureV2 = Type.Object({
  ...featureFields,
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
  permissions: Type.Optional(Type.Array(PermissionRef, { maxItems: 500 })),
});
export const UpdateFeatureV2 = Type.Partial(
  Type.Object({ ...featureFields, permissions: Type.Array(PermissionRef, { maxItems: 500 }) }),
);
export type FeatureInput = {
  name?: string;
  key?: string;
  description?: string;
  metadata?: unknown;
  permissions?: string[];
};

const planFields = {
  name: Name,
  defaultTreatment: Treatment,
  rules: Rules,
  description: Description,
  metadata: Metadata,
  defaultTimeLimitation: Type.Union([Type.Integer({ minimum: 1, maximum: 36500, description: 'days' }), Type.Null()]),
  assignOnSignup: Type.Boolean(),
  featureKeys: Type.Array(Key, { maxItems: 1000 }),
};
export const CreatePlan = Type.Object({ ...Type.Partial(Type.Object(planFields)).properties, name: Name });
export const UpdatePlan = Type.Partial(Type.Object(planFields));
export type PlanInput = Static<typeof UpdatePlan>;
export const LinkFeatures = Type.Object({ featuresIds: Ids });

const grantFields = {
  planId: Type.String({ minLength: 1, maxLength: 64 }),
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
  userId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
  expirationDate: Type.Optional(Type.Union([DateTime, Type.Null()])),
};
export const CreateGrant = Type.Object(grantFields);
export type CreateGrant = Static<typeof CreateGrant>;
/** PATCH bodies: `expirationDate` is optional (routes.md); left out or null, the entitlement no longer expires. */
export const UpdateGrant = Type.Object({ expirationDate: Type.Optional(Type.Union([DateTime, Type.Null()])) });
export const BatchCreateGrants = Type.Object({
  entitlements: Type.Array(CreateGrant, { minItems: 1, maxItems: 1000 }),
});
export const BatchUpdateGrants = Type.Object({
  entitlements: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1, maxLength: 64 }),
      expirationDate: Type.Optional(Type.Union([DateTime, Type.Null()])),
    }),
    { minItems: 1, maxItems: 1000 },
  ),
});
export const BatchDeleteQuery = Type.Object({
  ids: Type.Union([
    Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 1000 }),
    Type.String({ minLength: 1, maxLength: 65536 }),
  ]),
});
export const GrantListQuery = Type.Object({
  ...ListQuery.properties,
  planId: Type.Optional(Type.String({ maxLength: 64 })),
  tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  userId: Type.Optional(Type.String({ maxLength: 255 })),
  assignLevel: Type.Optional(Type.Union([Type.Literal('USER'), Type.Literal('TENANT')])),
});
export type GrantListQuery = Static<typeof GrantListQuery>;

const flagFields = {
  name: Name,
  on: Type.Boolean(),
  offTreatment: Treatment,
  defaultTreatment: Treatment,
  featureId: Type.String({ minLength: 1, maxLength: 64 }),
  description: Description,
  metadata: Metadata,
  rules: Rules,
};
export const CreateFlag = Type.Object({
  ...flagFields,
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
  rules: Type.Optional(Rules),
});
export const UpdateFlag = Type.Partial(Type.Object(flagFields));
export type FlagInput = Static<typeof UpdateFlag>;

const Method = Type.Union([
  Type.Literal('GET'),
  Type.Literal('POST'),
  Type.Literal('PUT'),
  Type.Literal('PATCH'),
  Type.Literal('DELETE'),
  Type.Literal('*'),
]);
const Policy = Type.Union([Type.Literal('allow'), Type.Literal('deny'), Type.Literal('ruleBased')]);
export const RouteRuleInput = Type.Object({
  type: Type.Union([Type.Literal('feature'), Type.Literal('permission')]),
  value: Type.String({ minLength: 1, maxLength: 255 }),
});
const routeFields = {
  method: Method,
  path: Type.String({ minLength: 1, maxLength: 2048, pattern: '^/' }),
  policyType: Policy,
  description: Type.String({ maxLength: 4096 }),
  priority: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  rules: Type.Array(RouteRuleInput, { maxItems: 100 }),
};
export const CreateRoute = Type.Object({
  ...routeFields,
  description: Type.Optional(routeFields.description),
  priority: Type.Optional(routeFields.priority),
  rules: Type.Optional(routeFields.rules),
});
export const UpdateRoute = Type.Partial(Type.Object(routeFields));
export type RouteInput = Static<typeof UpdateRoute>;
export const ReplaceRouteRules = Type.Object({ rules: Type.Array(RouteRuleInput, { maxItems: 100 }) });
export const ImportOpenApiQuery = Type.Object({ defaultPolicyType: Type.Optional(Policy) });
export const RoutesConfig = Type.Object({
  accessControlMode: Type.Union([Type.Literal('guard'), Type.Literal('monitor')]),
});
export const DecisionKindParams = Type.Object({
  kind: Type.Union([Type.Literal('features'), Type.Literal('permissions'), Type.Literal('routes')]),
});

// -- responses (records.ts DTOs; the serializer drops what a schema leaves out, so every field is listed) --
const Iso = Type.String({ format: 'date-time' });
const OpenObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
/** An object answer with no fields (deletes and batch updates). */
export const Empty = Type.Object({}, { description: 'empty object' });
const PageOf = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ items: Type.Array(item), hasNext: Type.Boolean() });

export const ConditionDto = Type.Object({
  attribute: Type.String(),
  negate: Type.Boolean(),
  op: Type.String({
    description:
      'in_list, starts_with, ends_with, contains, matches, equal, greater_than, greater_than_equal, lower_than, lower_than_equal, between_numeric, is, on, on_or_after, on_or_before, between_date',
  }),
  value: OpenObject('shaped by the operator: {list}, {string}, {number}, {start, end}, {boolean}, {date}'),
});
/** A targeting rule as stored (normaliseRules writes every field). */
export const RuleDto = Type.Object({
  description: Type.String(),
  conditionLogic: Type.Literal('and'),
  conditions: Type.Array(ConditionDto),
  treatment: Treatment,
});
export type RuleDto = Static<typeof RuleDto>;
const FeatureFlagThin = Type.Object({
  id: Type.String(),
  name: Type.String(),
  on: Type.Boolean(),
  offTreatment: Treatment,
  defaultTreatment: Treatment,
});
export const FeatureDto = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  name: Type.String(),
  key: Type.String(),
  metadata: OpenObject('free-form metadata'),
  description: Type.String(),
  createdAt: Iso,
  updatedAt: Iso,
  permissions: Type.Array(Type.String()),
  featureFlag: Type.Optional(FeatureFlagThin),
});
export const FeaturePage = PageOf(FeatureDto);
const PlanFeature = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key: Type.String(),
  permissions: Type.Array(Type.String()),
});
export const PlanFeaturePage = PageOf(PlanFeature);
export const PlanDto = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  name: Type.String(),
  defaultTreatment: Treatment,
  rules: Type.Array(RuleDto),
  description: Type.String(),
  metadata: OpenObject('free-form metadata'),
  defaultTimeLimitation: Nullable(Type.Integer({ description: 'days' })),
  assignOnSignup: Type.Boolean(),
  createdAt: Iso,
  updatedAt: Iso,
  features: Type.Array(PlanFeature),
});
export const PlanPage = PageOf(PlanDto);
const EntitlementPlan = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  name: Type.String(),
  defaultTimeLimitation: Nullable(Type.Integer()),
  description: Type.String(),
});
export const EntitlementDto = Type.Object({
  id: Type.String(),
  planId: Type.String(),
  tenantId: Type.String(),
  userId: Nullable(Type.String()),
  expirationDate: Nullable(Iso),
  createdAt: Iso,
  updatedAt: Iso,
  plan: Nullable(EntitlementPlan),
});
export const EntitlementPage = PageOf(EntitlementDto);
export const EntitlementIds = Type.Object({ entitlementIds: Type.Array(Type.String()) });
export const FeatureFlagDto = Type.Object({
  id: Type.String(),
  name: Type.String(),
  on: Type.Boolean(),
  offTreatment: Treatment,
  defaultTreatment: Treatment,
  feature: Type.Object({ id: Type.String(), key: Type.String(), name: Type.String() }),
  description: Type.String(),
  metadata: Type.String({ description: 'JSON text as stored' }),
  rules: Type.Array(RuleDto),
  createdAt: Iso,
  updatedAt: Iso,
});
export const FeatureFlagPage = PageOf(FeatureFlagDto);
export const RouteRuleDto = Type.Object({
  id: Type.String(),
  routeId: Type.String(),
  type: Type.Union([Type.Literal('feature'), Type.Literal('permission')]),
  value: Type.String(),
});
export const RouteRuleList = Type.Array(RouteRuleDto);
export const RouteDto = Type.Object({
  id: Type.String(),
  method: Method,
  path: Type.String(),
  priority: Type.Integer(),
  description: Type.String(),
  policyType: Policy,
  rules: Type.Array(RouteRuleDto),
});
export const RouteList = Type.Array(RouteDto, { description: 'in decision order (priority, then creation)' });
export const RoutesConfigDto = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  accessControlMode: RoutesConfig.properties.accessControlMode,
});
export const ImportOpenApiAnswer = Type.Object({
  created: Type.Array(RouteDto),
  skipped: Type.Array(Type.Object({ method: Type.String(), path: Type.String(), reason: Type.String() }), {
    description: 'operations not imported, with the reason',
  }),
});

/**
 * The snapshot (wire.md section 7). Its lists are tuples; OpenAPI 3.0 has no tuple type, so each is described as an
 * array of fixed length whose items are any of the element types, the order in the description.
 */
const tuple = <T extends TSchema[]>(description: string, items: [...T]) =>
  Type.Array(Type.Union(items), { minItems: items.length, maxItems: items.length, description });
const Strings = Type.Array(Type.String());
export const SnapshotDto = Type.Object({
  snapshotOffset: Type.Integer({ description: 'moves with every management write' }),
  data: Type.Object({
    features: Type.Array(tuple('[featureId, featureKey, permissionKeys[]]', [Type.String(), Type.String(), Strings])),
    featureBundles: Type.Array(
      tuple('[planId, featureIds[], defaultTreatment, rules[]]', [
        Type.String(),
        Strings,
        Treatment,
        Type.Array(RuleDto),
      ]),
    ),
    entitlements: Type.Array(
      tuple('[planId, tenantId, userId | null, expirationDate | null]', [
        Type.String(),
        Type.String(),
        Nullable(Type.String()),
        Nullable(Iso),
      ]),
    ),
    featureFlags: Type.Array(
      tuple('[featureKey, on, "boolean", defaultTreatment, offTreatment, rules[]]', [
        Type.String(),
        Type.Boolean(),
        Type.Literal('boolean'),
        Treatment,
        Treatment,
        Type.Array(RuleDto),
      ]),
    ),
    routes: Type.Array(
      tuple('[routeId, method, pathPattern, priority, policyType, [ruleType, value][]]', [
        Type.String(),
        Method,
        Type.String(),
        Type.Integer(),
        Policy,
        Type.Array(tuple('[ruleType, value]', [RouteRuleInput.properties.type, Type.String()])),
      ]),
    ),
    routesMode: RoutesConfig.properties.accessControlMode,
  }),
});
export type SnapshotDto = Static<typeof SnapshotDto>;
export const SnapshotOffsetDto = Type.Object({ snapshotOffset: Type.Integer() });
export const DecisionAnswer = Type.Object({
  decision_id: Type.String({ format: 'uuid' }),
  metrics: Type.Object({ timer_server_handler_ns: Type.Optional(Type.Integer({ description: 'with ?metrics=true' })) }),
  result: Type.Object({
    result: Type.Boolean(),
    justification: Type.Optional(
      Type.Union([
        Type.Literal('MISSING_FEATURE'),
        Type.Literal('MISSING_PERMISSION'),
        Type.Literal('PLAN_EXPIRED'),
        Type.Literal('MISSING_ROUTE'),
        Type.Literal('ROUTE_DENIED'),
      ]),
    ),
    monitoring: Type.Optional(Type.Boolean()),
  }),
});
/** The decisions route's own 400 (a policy engine's data-API style); open, as a guard error keeps the wire body. */
export const DecisionInputError = Type.Object(
  { code: Type.Optional(Type.String({ description: 'invalid_parameter' })), message: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
