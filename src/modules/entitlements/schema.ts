import { Type, type Static } from 'typebox';

/** Management API bodies and queries (routes.md, "Entitlements management"). Rule shapes are checked by the service. */
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Key = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s]+$' });
const Description = Type.String({ maxLength: 4096 });
const Treatment = Type.Union([Type.Literal('true'), Type.Literal('false')]);
const Metadata = Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ maxLength: 65536 })]);
/** Targeting rules `{description, conditionLogic: 'and', conditions: [{attribute, op, value, negate}], treatment}`. */
const Rules = Type.Array(Type.Unknown(), { maxItems: 100, description: 'targeting rules; conditions are checked per operator' });
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
export const CreateFeature = Type.Object({ ...featureFields, description: Type.Optional(Description), metadata: Type.Optional(Metadata), permissions: Type.Optional(PermissionKeys) });
export const UpdateFeature = Type.Partial(Type.Object({ ...featureFields, permissions: PermissionKeys }));
const PermissionRef = Type.Object({ permissionKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), permissionId: Type.Optional(Type.String({ maxLength: 64 })) });
export const CreateFeatureV2 = Type.Object({ ...featureFields, description: Type.Optional(Description), metadata: Type.Optional(Metadata), permissions: Type.Optional(Type.Array(PermissionRef, { maxItems: 500 })) });
export const UpdateFeatureV2 = Type.Partial(Type.Object({ ...featureFields, permissions: Type.Array(PermissionRef, { maxItems: 500 }) }));
export type FeatureInput = { name?: string; key?: string; description?: string; metadata?: unknown; permissions?: string[] };

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

const grantFields = { planId: Type.String({ minLength: 1, maxLength: 64 }), tenantId: Type.String({ minLength: 1, maxLength: 255 }), userId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])), expirationDate: Type.Optional(Type.Union([DateTime, Type.Null()])) };
export const CreateGrant = Type.Object(grantFields);
export type CreateGrant = Static<typeof CreateGrant>;
export const UpdateGrant = Type.Object({ expirationDate: Type.Union([DateTime, Type.Null()]) });
export const BatchCreateGrants = Type.Object({ entitlements: Type.Array(CreateGrant, { minItems: 1, maxItems: 1000 }) });
export const BatchUpdateGrants = Type.Object({ entitlements: Type.Array(Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), expirationDate: Type.Union([DateTime, Type.Null()]) }), { minItems: 1, maxItems: 1000 }) });
export const BatchDeleteQuery = Type.Object({ ids: Type.Union([Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 1000 }), Type.String({ minLength: 1, maxLength: 65536 })]) });
export const GrantListQuery = Type.Object({
  ...ListQuery.properties,
  planId: Type.Optional(Type.String({ maxLength: 64 })),
  tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  userId: Type.Optional(Type.String({ maxLength: 255 })),
  assignLevel: Type.Optional(Type.Union([Type.Literal('USER'), Type.Literal('TENANT')])),
});
export type GrantListQuery = Static<typeof GrantListQuery>;

const flagFields = { name: Name, on: Type.Boolean(), offTreatment: Treatment, defaultTreatment: Treatment, featureId: Type.String({ minLength: 1, maxLength: 64 }), description: Description, metadata: Metadata, rules: Rules };
export const CreateFlag = Type.Object({ ...flagFields, description: Type.Optional(Description), metadata: Type.Optional(Metadata), rules: Type.Optional(Rules) });
export const UpdateFlag = Type.Partial(Type.Object(flagFields));
export type FlagInput = Static<typeof UpdateFlag>;

const Method = Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', '*'].map((m) => Type.Literal(m)));
const Policy = Type.Union([Type.Literal('allow'), Type.Literal('deny'), Type.Literal('ruleBased')]);
export const RouteRuleInput = Type.Object({ type: Type.Union([Type.Literal('feature'), Type.Literal('permission')]), value: Type.String({ minLength: 1, maxLength: 255 }) });
const routeFields = {
  method: Method,
  path: Type.String({ minLength: 1, maxLength: 2048, pattern: '^/' }),
  policyType: Policy,
  description: Type.String({ maxLength: 4096 }),
  priority: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  rules: Type.Array(RouteRuleInput, { maxItems: 100 }),
};
export const CreateRoute = Type.Object({ ...routeFields, description: Type.Optional(routeFields.description), priority: Type.Optional(routeFields.priority), rules: Type.Optional(routeFields.rules) });
export const UpdateRoute = Type.Partial(Type.Object(routeFields));
export type RouteInput = Static<typeof UpdateRoute>;
export const ReplaceRouteRules = Type.Object({ rules: Type.Array(RouteRuleInput, { maxItems: 100 }) });
export const ImportOpenApiQuery = Type.Object({ defaultPolicyType: Type.Optional(Policy) });
export const RoutesConfig = Type.Object({ accessControlMode: Type.Union([Type.Literal('guard'), Type.Literal('monitor')]) });
export const DecisionKindParams = Type.Object({ kind: Type.Union([Type.Literal('features'), Type.Literal('permissions'), Type.Literal('routes')]) });
