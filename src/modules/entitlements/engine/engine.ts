import { permissionMatches } from '../../../lib/permissions.ts';
import { compileRules, treatmentOf, toTime, type Attributes, type CompiledRule } from './conditions.ts';
import type { Decision, DecisionInput, DecisionKind, RouteTuple, SnapshotData, SubjectContext } from './types.ts';

/**
 * The decision engine: pure, no I/O. `compile` turns a snapshot into indexes once; `decide` answers one request from
 * them (wire.md section 7). The agent and the server's decision route both call this one implementation.
 */

interface Grant {
  planId: string;
  /** epoch ms; null: never expires. Unparseable dates count as expired (fail closed). */
  expiresAt: number | null;
}
interface TenantGrants {
  account: Grant[];
  users: Map<string, Grant[]>;
}
interface CompiledRoute {
  id: string;
  method: string;
  segments: string[];
  /** The pattern ends in `*`: one or more further segments. */
  tail: boolean;
  priority: number;
  policy: RouteTuple[4];
  rules: RouteTuple[5];
}
interface TargetingPlan {
  rules: CompiledRule[];
  defaultTreatment: boolean;
}
interface Flag {
  on: boolean;
  rules: CompiledRule[];
  defaultTreatment: boolean;
  offTreatment: boolean;
}

const TRUE: Decision = Object.freeze({ result: true }) as Decision;
const MISSING_FEATURE: Decision = Object.freeze({ result: false, justification: 'MISSING_FEATURE' }) as Decision;
const PLAN_EXPIRED: Decision = Object.freeze({ result: false, justification: 'PLAN_EXPIRED' }) as Decision;
const MISSING_PERMISSION: Decision = Object.freeze({ result: false, justification: 'MISSING_PERMISSION' }) as Decision;
const MISSING_ROUTE: Decision = Object.freeze({ result: false, justification: 'MISSING_ROUTE' }) as Decision;
const ROUTE_DENIED: Decision = Object.freeze({ result: false, justification: 'ROUTE_DENIED' }) as Decision;

/** Splits a request path or a pattern into its non-empty segments (query and fragment dropped). */
export function pathSegments(path: string): string[] {
  const q = path.search(/[?#]/);
  return (q >= 0 ? path.slice(0, q) : path).split('/').filter((s) => s.length > 0);
}

/** Segment by segment: `{name}` is one segment, a final `*` one or more, anything else literal. */
export function routeMatches(route: Pick<CompiledRoute, 'segments' | 'tail'>, segs: string[]): boolean {
  const n = route.segments.length;
  if (route.tail ? segs.length <= n : segs.length !== n) return false;
  for (let i = 0; i < n; i++) {
    const p = route.segments[i];
    if (p.length > 1 && p.charCodeAt(0) === 123 /* { */ && p.charCodeAt(p.length - 1) === 125 /* } */) continue;
    if (p !== segs[i]) return false;
  }
  return true;
}

export function compileRoute(t: RouteTuple): CompiledRoute {
  const segments = pathSegments(t[2]);
  const tail = segments.length > 0 && segments[segments.length - 1] === '*';
  if (tail) segments.pop();
  return { id: t[0], method: t[1].toUpperCase(), segments, tail, priority: t[3], policy: t[4], rules: t[5] ?? [] };
}

export type Engine = ReturnType<typeof compile>;

export function compile(data: SnapshotData) {
  const featureKeyById = new Map<string, string>();
  const featuresByPermission = new Map<string, string[]>();
  for (const [id, key, permissions] of data.features ?? []) {
    featureKeyById.set(id, key);
    for (const p of permissions ?? []) {
      const list = featuresByPermission.get(p);
      if (list) list.push(key);
      else featuresByPermission.set(p, [key]);
    }
  }

  const planFeatures = new Map<string, Set<string>>();
  const targetingByFeature = new Map<string, TargetingPlan[]>();
  for (const [planId, featureIds, defaultTreatment, rules] of data.featureBundles ?? []) {
    const keys = new Set<string>();
    for (const fid of featureIds ?? []) {
      const key = featureKeyById.get(fid);
      if (key !== undefined) keys.add(key);
    }
    planFeatures.set(planId, keys);
    if ((rules && rules.length > 0) || defaultTreatment === 'true') {
      const plan: TargetingPlan = { rules: compileRules(rules), defaultTreatment: defaultTreatment === 'true' };
      for (const key of keys) {
        const list = targetingByFeature.get(key);
        if (list) list.push(plan);
        else targetingByFeature.set(key, [plan]);
      }
    }
  }

  const grants = new Map<string, TenantGrants>();
  for (const [planId, tenantId, userId, expirationDate] of data.entitlements ?? []) {
    let t = grants.get(tenantId);
    if (!t) grants.set(tenantId, (t = { account: [], users: new Map() }));
    const g: Grant = {
      planId,
      expiresAt: expirationDate === null || expirationDate === undefined ? null : toTime(expirationDate),
    };
    if (Number.isNaN(g.expiresAt)) g.expiresAt = 0;
    if (userId === null || userId === undefined) t.account.push(g);
    else {
      const list = t.users.get(userId);
      if (list) list.push(g);
      else t.users.set(userId, [g]);
    }
  }

  const flags = new Map<string, Flag>();
  for (const [key, on, , def, off, rules] of data.featureFlags ?? []) {
    flags.set(key, {
      on: on === true,
      rules: compileRules(rules),
      defaultTreatment: def === 'true',
      offTreatment: off === 'true',
    });
  }

  // Stable sort: equal priorities keep the snapshot's order (the server emits them by creation).
  const routes = (data.routes ?? []).map(compileRoute).sort((a, b) => a.priority - b.priority);
  const routesByMethod = new Map<string, CompiledRoute[]>();
  const anyMethod = routes.filter((r) => r.method === '*');
  for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
    routesByMethod.set(
      m,
      routes.filter((r) => r.method === m || r.method === '*'),
    );
  }
  const monitor = data.routesMode === 'monitor';

  function attributesOf(subject: SubjectContext): Attributes {
    return {
      'gatehouse.tenantId': subject.tenantId,
      'gatehouse.userId': subject.userId ?? undefined,
      ...subject.attributes,
    };
  }

  /** Grants of the account and of the user: true, 'expired' (only expired grants hold it) or false. */
  function granted(key: string, subject: SubjectContext, now: number): true | 'expired' | false {
    const t = grants.get(subject.tenantId);
    if (!t) return false;
    let expired = false;
    const check = (list: Grant[] | undefined) => {
      if (!list) return false;
      for (const g of list) {
        if (!planFeatures.get(g.planId)?.has(key)) continue;
        if (g.expiresAt === null || g.expiresAt > now) return true;
        expired = true;
      }
      return false;
    };
    if (check(t.account)) return true;
    if (subject.userId !== null && check(t.users.get(subject.userId))) return true;
    return expired ? 'expired' : false;
  }

  function feature(key: string, subject: SubjectContext, now: number, attrs: { v?: Attributes }): Decision {
    const direct = granted(key, subject, now);
    if (direct === true) return TRUE;
    const flag = flags.get(key);
    if (flag) {
      const on = flag.on
        ? treatmentOf(flag.rules, (attrs.v ??= attributesOf(subject)), flag.defaultTreatment)
        : flag.offTreatment;
      if (on) return TRUE;
    }
    const targeting = targetingByFeature.get(key);
    if (targeting) {
      for (const plan of targeting)
        if (treatmentOf(plan.rules, (attrs.v ??= attributesOf(subject)), plan.defaultTreatment)) return TRUE;
    }
    return direct === 'expired' ? PLAN_EXPIRED : MISSING_FEATURE;
  }

  const holds = (subject: SubjectContext, key: string) => {
    for (const h of subject.permissions) if (permissionMatches(h, key)) return true;
    return false;
  };

  function permission(key: string, subject: SubjectContext, now: number, attrs: { v?: Attributes }): Decision {
    if (!holds(subject, key)) return MISSING_PERMISSION;
    const linked = featuresByPermission.get(key);
    if (!linked || linked.length === 0) return TRUE;
    let expired = false;
    for (const fk of linked) {
      const d = feature(fk, subject, now, attrs);
      if (d.result) return TRUE;
      if (d.justification === 'PLAN_EXPIRED') expired = true;
    }
    return expired ? PLAN_EXPIRED : MISSING_FEATURE;
  }

  function route(
    method: string,
    path: string,
    subject: SubjectContext,
    now: number,
    attrs: { v?: Attributes },
  ): Decision {
    const segs = pathSegments(path);
    const candidates = routesByMethod.get(method.toUpperCase()) ?? anyMethod;
    let d: Decision = MISSING_ROUTE;
    for (const r of candidates) {
      if (!routeMatches(r, segs)) continue;
      if (r.policy === 'allow') d = TRUE;
      else if (r.policy === 'deny') d = ROUTE_DENIED;
      else {
        d = TRUE;
        for (const [type, value] of r.rules) {
          const rd =
            type === 'permission'
              ? holds(subject, value)
                ? TRUE
                : MISSING_PERMISSION
              : feature(value, subject, now, attrs);
          if (!rd.result) {
            d = rd;
            break;
          }
        }
      }
      break;
    }
    return monitor ? { ...d, monitoring: true } : d;
  }

  return {
    /** Answers one validated request. `now` (epoch ms) decides grant expiry; it defaults to the clock. */
    decide(kind: DecisionKind, input: DecisionInput, now: number = Date.now()): Decision {
      const subject = input.subjectContext;
      const rc = input.requestContext as Record<string, string>;
      const attrs: { v?: Attributes } = {};
      if (kind === 'feature') return feature(rc.featureKey, subject, now, attrs);
      if (kind === 'permission') return permission(rc.permissionKey, subject, now, attrs);
      return route(rc.method, rc.path, subject, now, attrs);
    },
    stats: () => ({
      features: featureKeyById.size,
      plans: planFeatures.size,
      tenants: grants.size,
      flags: flags.size,
      routes: routes.length,
    }),
  };
}
