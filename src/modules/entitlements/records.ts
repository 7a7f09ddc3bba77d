import { AppError } from '../../http/errors.ts';
import type { EventsService } from '../events/index.ts';
import { iso } from '../../lib/time.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db } from '../../storage/db.ts';
import { rulesProblem, type PolicyType, type Rule, type RouteMethod, type RouteRuleType } from './engine/index.ts';
import type { RuleDto } from './schema.ts';
import * as store from './store.ts';

/** Shared by the entitlements services: dependencies, the write wrapper, rule normalisation and DTO mappers. */
export interface EntitlementsDeps {
  db: Db;
  /** The environment id, answered as `vendorId`. */
  vendorId: () => string;
  /** Throws ACCOUNT_NOT_FOUND unless the account is live. */
  requireAccount: (q: Db, tenantId: string) => Promise<unknown>;
  /** The outbox: entitlement.granted, entitlement.revoked. */
  events?: EventsService;
}

/** Runs a write in one transaction and bumps the snapshot offset in it. Unique violations become `conflict`. */
export async function write<T>(db: Db, fn: (tx: Db) => Promise<T>, conflict?: () => AppError): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      const r = await fn(tx);
      await store.bumpOffset(tx);
      return r;
    });
  } catch (err) {
    if (conflict && isUniqueViolation(err)) throw conflict();
    throw err;
  }
}

/** Checks targeting rules and returns them in canonical form (400 naming the field when malformed). */
export function normaliseRules(rules: unknown, field = 'rules'): Rule[] {
  const problem = rulesProblem(rules, field);
  if (problem) throw new AppError('INVALID_RULES', problem);
  return (rules as Record<string, any>[]).map((r) => ({
    description: typeof r.description === 'string' ? r.description : '',
    conditionLogic: 'and' as const,
    conditions: (r.conditions as Record<string, any>[]).map((c) => ({
      attribute: c.attribute,
      negate: c.negate === true,
      op: c.op,
      value: c.value,
    })),
    treatment: r.treatment,
  }));
}

export function metadataObject(v: unknown, field = 'metadata'): Record<string, unknown> {
  let m = v;
  if (typeof m === 'string') {
    try {
      m = JSON.parse(m);
    } catch {
      throw new AppError('VALIDATION', `${field} must be a JSON object or a string holding one`);
    }
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m))
    throw new AppError('VALIDATION', `${field} must be a JSON object`);
  return m as Record<string, unknown>;
}

export const page = <T>(rows: T[], limit: number) => ({ items: rows.slice(0, limit), hasNext: rows.length > limit });

export function featureDto(r: store.FeatureRow, vendorId: string, flag?: store.FlagRow) {
  return {
    id: r.id,
    vendorId,
    name: r.name,
    key: r.key,
    metadata: r.metadata,
    description: r.description,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    permissions: r.permissions,
    ...(flag
      ? {
          featureFlag: {
            id: flag.id,
            name: flag.name,
            on: flag.on,
            offTreatment: flag.off_treatment,
            defaultTreatment: flag.default_treatment,
          },
        }
      : {}),
  };
}

export function planDto(r: store.PlanRow, vendorId: string, features: Map<string, store.FeatureRow>) {
  return {
    id: r.id,
    vendorId,
    name: r.name,
    defaultTreatment: r.default_treatment,
    rules: r.rules as RuleDto[],
    description: r.description,
    metadata: r.metadata,
    defaultTimeLimitation: r.default_time_limitation,
    assignOnSignup: r.assign_on_signup,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    features: r.feature_ids
      .map((id) => features.get(id))
      .filter((f): f is store.FeatureRow => !!f)
      .map((f) => ({ id: f.id, name: f.name, key: f.key, permissions: f.permissions })),
  };
}

export function grantDto(r: store.GrantRow, vendorId: string, plan?: store.PlanRow) {
  return {
    id: r.id,
    planId: r.plan_id,
    tenantId: r.tenant_id,
    userId: r.user_id,
    expirationDate: iso(r.expiration_date),
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    plan: plan
      ? {
          id: plan.id,
          vendorId,
          name: plan.name,
          defaultTimeLimitation: plan.default_time_limitation,
          description: plan.description,
        }
      : null,
  };
}

export function flagDto(r: store.FlagRow) {
  return {
    id: r.id,
    name: r.name,
    on: r.on,
    offTreatment: r.off_treatment,
    defaultTreatment: r.default_treatment,
    feature: { id: r.feature_id, key: r.feature_key, name: r.feature_name },
    description: r.description,
    metadata: r.metadata,
    rules: r.rules as RuleDto[],
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export function routeDto(r: store.RouteRow) {
  return {
    id: r.id,
    method: r.method as RouteMethod,
    path: r.path,
    priority: r.priority,
    description: r.description,
    policyType: r.policy_type as PolicyType,
    rules: r.rules.map((x) => ({ id: x.id, routeId: r.id, type: x.type as RouteRuleType, value: x.value })),
  };
}
