import type { DecisionInput, DecisionKind, RequestContext } from './types.ts';

/** A malformed decision request, answered 400 in a policy engine's data-API style. */
export interface InputError {
  code: 'invalid_parameter';
  message: string;
}

export type Parsed = { ok: true; input: DecisionInput } | { ok: false; error: InputError };

export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const MAX_KEY = 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (message: string): Parsed => ({ ok: false, error: { code: 'invalid_parameter', message } });

/**
 * Checks a decision request body `{input: {subjectContext, requestContext}}` for one kind. Unknown accounts, users or
 * features are not input errors (they are negative decisions); wrong types and missing required fields are.
 */
export function parseDecisionRequest(kind: DecisionKind, body: unknown): Parsed {
  if (!isObj(body)) return fail('request body must be a JSON object');
  const input = body.input;
  if (input === undefined) return fail('input is required');
  if (!isObj(input)) return fail('input must be an object');
  const sc = input.subjectContext;
  if (!isObj(sc)) return fail('input.subjectContext is required and must be an object');
  if (typeof sc.tenantId !== 'string' || sc.tenantId.length === 0)
    return fail('input.subjectContext.tenantId is required and must be a non-empty string');
  if (sc.userId !== undefined && sc.userId !== null && typeof sc.userId !== 'string')
    return fail('input.subjectContext.userId must be a string or null');
  if (
    sc.permissions !== undefined &&
    (!Array.isArray(sc.permissions) || !sc.permissions.every((p) => typeof p === 'string'))
  ) {
    return fail('input.subjectContext.permissions must be an array of strings');
  }
  if (sc.attributes !== undefined && sc.attributes !== null && !isObj(sc.attributes))
    return fail('input.subjectContext.attributes must be an object');
  const rc = input.requestContext;
  if (!isObj(rc)) return fail('input.requestContext is required and must be an object');
  let requestContext: RequestContext;
  if (kind === 'feature') {
    if (typeof rc.featureKey !== 'string' || rc.featureKey.length === 0 || rc.featureKey.length > MAX_KEY)
      return fail('input.requestContext.featureKey is required and must be a non-empty string');
    requestContext = { featureKey: rc.featureKey };
  } else if (kind === 'permission') {
    if (typeof rc.permissionKey !== 'string' || rc.permissionKey.length === 0 || rc.permissionKey.length > MAX_KEY)
      return fail('input.requestContext.permissionKey is required and must be a non-empty string');
    requestContext = { permissionKey: rc.permissionKey };
  } else {
    if (typeof rc.method !== 'string') return fail('input.requestContext.method is required and must be a string');
    const method = rc.method.toUpperCase();
    if (!(ROUTE_METHODS as readonly string[]).includes(method))
      return fail(`input.requestContext.method must be one of ${ROUTE_METHODS.join(', ')}`);
    if (typeof rc.path !== 'string' || rc.path.length === 0)
      return fail('input.requestContext.path is required and must be a non-empty string');
    requestContext = { method, path: rc.path };
  }
  return {
    ok: true,
    input: {
      subjectContext: {
        tenantId: sc.tenantId,
        userId: typeof sc.userId === 'string' ? sc.userId : null,
        permissions: (sc.permissions as string[] | undefined) ?? [],
        attributes: (sc.attributes as Record<string, unknown> | undefined | null) ?? {},
      },
      requestContext,
    },
  };
}

/** The three agent paths and the decision kind each answers. */
export const DECISION_PATHS: Record<DecisionKind, string> = {
  feature: '/v1/data/e10s/features/is_entitled_to_input_feature',
  permission: '/v1/data/e10s/permissions/is_entitled_to_input_permission',
  route: '/v1/data/e10s/routes/is_entitled_to_input_route',
};
