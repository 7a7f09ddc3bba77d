/**
 * The entitlements snapshot as it travels from the server to the agent (wire.md section 7) and the decision shapes.
 * Pure types: the engine, the server's snapshot builder and the agent all speak these.
 */
export type Treatment = 'true' | 'false';

export const OPERATORS = [
  'in_list',
  'starts_with',
  'ends_with',
  'contains',
  'matches',
  'equal',
  'greater_than',
  'greater_than_equal',
  'lower_than',
  'lower_than_equal',
  'between_numeric',
  'is',
  'on',
  'on_or_after',
  'on_or_before',
  'between_date',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** One condition of a targeting rule: `value` is shaped by the operator (see conditions.ts, VALUE_SHAPES). */
export interface Condition {
  attribute: string;
  negate: boolean;
  op: Operator;
  value: Record<string, unknown>;
}

/** A targeting rule: when every condition holds (`conditionLogic: 'and'`), the rule's treatment applies. */
export interface Rule {
  description?: string;
  conditionLogic: 'and';
  conditions: Condition[];
  treatment: Treatment;
}

/** `[featureId, featureKey, permissionKeys[]]` */
export type FeatureTuple = [string, string, string[]];
/** `[planId, featureIds[], defaultTreatment, rules[]]` (a "feature bundle") */
export type PlanTuple = [string, string[], Treatment, Rule[]];
/** `[planId, tenantId, userId | null, expirationDate | null]` */
export type GrantTuple = [string, string, string | null, string | null];
/** `[featureKey, on, "boolean", defaultTreatment, offTreatment, rules[]]` */
export type FlagTuple = [string, boolean, 'boolean', Treatment, Treatment, Rule[]];

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
export type PolicyType = 'allow' | 'deny' | 'ruleBased';
export type RouteRuleType = 'permission' | 'feature';
/** `[routeId, method, pathPattern, priority, policyType, [ruleType, value][]]` */
export type RouteTuple = [string, RouteMethod, string, number, PolicyType, [RouteRuleType, string][]];
export type RoutesMode = 'guard' | 'monitor';

export interface SnapshotData {
  features: FeatureTuple[];
  featureBundles: PlanTuple[];
  entitlements: GrantTuple[];
  featureFlags: FlagTuple[];
  routes: RouteTuple[];
  routesMode: RoutesMode;
}

export interface Snapshot {
  snapshotOffset: number;
  data: SnapshotData;
}

export type DecisionKind = 'feature' | 'permission' | 'route';
export type Justification =
  | 'MISSING_FEATURE'
  | 'MISSING_PERMISSION'
  | 'PLAN_EXPIRED'
  | 'MISSING_ROUTE'
  | 'ROUTE_DENIED';

export interface Decision {
  result: boolean;
  justification?: Justification;
  monitoring?: boolean;
}

export interface SubjectContext {
  tenantId: string;
  userId: string | null;
  permissions: string[];
  attributes: Record<string, unknown>;
}

export type RequestContext = { featureKey: string } | { permissionKey: string } | { method: string; path: string };

export interface DecisionInput<R extends RequestContext = RequestContext> {
  subjectContext: SubjectContext;
  requestContext: R;
}

export const emptySnapshotData = (): SnapshotData => ({
  features: [],
  featureBundles: [],
  entitlements: [],
  featureFlags: [],
  routes: [],
  routesMode: 'guard',
});
