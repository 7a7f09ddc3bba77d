import { AppError } from '../../http/errors.ts';
import { engine } from '../entitlements/index.ts';

/**
 * Targeting rules: `{conditionLogic: 'and', conditions, treatment}` where `treatment` is a template key. A condition
 * is the vendor's `{attribute, op, value, negate}` (the entitlements engine's condition shape), over the token's
 * attributes below, all strings, so the string operators apply. Rules are tried in order; the first whose conditions
 * all hold chooses the template (a rule without conditions holds for every token); none: no template.
 */
export const ATTRIBUTES = ['tenantId', 'applicationId', 'userId', 'email', 'roleId'] as const;
export type Attribute = (typeof ATTRIBUTES)[number];
const STRING_OPS = ['in_list', 'starts_with', 'ends_with', 'contains', 'matches'];
export const MAX_RULES = 100;
const MAX_CONDITIONS = 20;

export interface TargetingRule {
  conditionLogic: 'and';
  conditions: { attribute: string; op: string; value: Record<string, unknown>; negate?: boolean }[];
  treatment: string;
}

/** What a rule is evaluated against; `roleIds` holds when any of the user's role ids in the account matches. */
export interface TargetFacts {
  tenantId: string;
  applicationId?: string;
  userId: string;
  email?: string | null;
  roleIds: readonly string[];
}

/** Throws a 400 naming the field when a rule is malformed; answers the template keys the rules name. */
export function checkRules(rules: TargetingRule[]): Set<string> {
  if (rules.length > MAX_RULES) throw new AppError('VALIDATION', `body.rules may hold at most ${MAX_RULES} rules`);
  const keys = new Set<string>();
  rules.forEach((r, i) => {
    const at = `body.rules.${i}`;
    if (r.conditions.length > MAX_CONDITIONS)
      throw new AppError('VALIDATION', `${at}.conditions may hold at most ${MAX_CONDITIONS} conditions`);
    r.conditions.forEach((c, j) => {
      const where = `${at}.conditions.${j}`;
      if (!(ATTRIBUTES as readonly string[]).includes(c.attribute))
        throw new AppError('VALIDATION', `${where}.attribute must be one of ${ATTRIBUTES.join(', ')}`);
      if (!STRING_OPS.includes(c.op))
        throw new AppError(
          'VALIDATION',
          `${where}.op must be one of ${STRING_OPS.join(', ')} (the attributes are text)`,
        );
      const problem = engine.conditionProblem(c, where);
      if (problem) throw new AppError('VALIDATION', problem);
    });
    keys.add(r.treatment);
  });
  return keys;
}

type Matcher = (f: TargetFacts) => boolean;

function compileOne(c: TargetingRule['conditions'][number]): Matcher {
  // The operator without `negate`, applied to one value; `negate` then applies to the whole attribute.
  const test = engine.compileCondition({ attribute: 'v', op: c.op as engine.Operator, value: c.value, negate: false });
  const one = (v: string | null | undefined) => (v === undefined || v === null ? undefined : test({ v }));
  return (f) => {
    let r: boolean | undefined;
    if (c.attribute === 'roleId') r = f.roleIds.length === 0 ? undefined : f.roleIds.some((id) => one(id));
    else r = one(f[c.attribute as Exclude<Attribute, 'roleId'>]);
    // An attribute the token does not have (no application known) never matches, negated or not.
    if (r === undefined) return false;
    return c.negate ? !r : r;
  };
}

/** The rules compiled once per configuration load: answers the first matching rule's template key. */
export function compileRules(rules: TargetingRule[]): (f: TargetFacts) => string | undefined {
  const compiled = rules.map((r) => ({ all: r.conditions.map(compileOne), key: r.treatment }));
  return (f) => compiled.find((r) => r.all.every((m) => m(f)))?.key;
}
