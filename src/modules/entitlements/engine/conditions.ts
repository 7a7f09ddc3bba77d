import { OPERATORS, type Condition, type Operator, type Rule } from './types.ts';

/**
 * Rule conditions: checking their shape (the management API refuses a wrong one with a 400) and compiling them into
 * closures once per snapshot. Value shapes per operator:
 *   in_list, starts_with, ends_with, contains  {list: string[]}   (true when any list item matches)
 *   matches                                     {string: regex}
 *   equal, greater_than(_equal), lower_than(_equal)  {number: n}
 *   between_numeric                             {start: n, end: n}   (inclusive)
 *   is                                          {boolean: b}
 *   on, on_or_after, on_or_before               {date: ISO-8601}     (`on`: same UTC calendar day)
 *   between_date                                {start: ISO, end: ISO} (inclusive)
 * A missing attribute (absent or null), or one of the wrong type for the operator, makes the condition false even
 * when negated; otherwise `negate` inverts the operator's answer.
 */

type Shape = 'list' | 'string' | 'number' | 'range' | 'boolean' | 'date' | 'dateRange';
export const VALUE_SHAPES: Record<Operator, Shape> = {
  in_list: 'list',
  starts_with: 'list',
  ends_with: 'list',
  contains: 'list',
  matches: 'string',
  equal: 'number',
  greater_than: 'number',
  greater_than_equal: 'number',
  lower_than: 'number',
  lower_than_equal: 'number',
  between_numeric: 'range',
  is: 'boolean',
  on: 'date',
  on_or_after: 'date',
  on_or_before: 'date',
  between_date: 'dateRange',
};
const SHAPE_TEXT: Record<Shape, string> = {
  list: '{list: string[]}',
  string: '{string: regular expression}',
  number: '{number: number}',
  range: '{start: number, end: number}',
  boolean: '{boolean: boolean}',
  date: '{date: ISO-8601 date}',
  dateRange: '{start: ISO-8601 date, end: ISO-8601 date}',
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A date from an ISO-8601 string, a Date or epoch milliseconds; NaN when it is none of these. */
export function toTime(v: unknown): number {
  if (typeof v === 'string') return v.trim() === '' ? NaN : Date.parse(v);
  if (v instanceof Date) return v.getTime();
  if (isNum(v)) return v;
  return NaN;
}

/** Why a condition is malformed (a message naming the field), or undefined when it is well formed. */
export function conditionProblem(c: unknown, where: string): string | undefined {
  if (!isObj(c)) return `${where} must be an object {attribute, op, value, negate}`;
  if (typeof c.attribute !== 'string' || c.attribute.length === 0)
    return `${where}.attribute must be a non-empty string`;
  if (c.negate !== undefined && typeof c.negate !== 'boolean') return `${where}.negate must be a boolean`;
  if (typeof c.op !== 'string' || !(OPERATORS as readonly string[]).includes(c.op))
    return `${where}.op must be one of ${OPERATORS.join(', ')}`;
  const shape = VALUE_SHAPES[c.op as Operator];
  const v = c.value;
  const bad = `${where}.value must be ${SHAPE_TEXT[shape]} for op ${c.op}`;
  if (!isObj(v)) return bad;
  switch (shape) {
    case 'list':
      return Array.isArray(v.list) && v.list.length > 0 && v.list.every((x) => typeof x === 'string') ? undefined : bad;
    case 'string':
      if (typeof v.string !== 'string') return bad;
      try {
        new RegExp(v.string);
      } catch {
        return `${where}.value.string is not a valid regular expression`;
      }
      if (catastrophic(v.string))
        return `${where}.value.string repeats a group that itself repeats or alternates (such as (a+)+ or (a|b)*): it could take exponential time on a crafted attribute`;
      return undefined;
    case 'number':
      return isNum(v.number) ? undefined : bad;
    case 'range':
      return isNum(v.start) && isNum(v.end) ? undefined : bad;
    case 'boolean':
      return typeof v.boolean === 'boolean' ? undefined : bad;
    case 'date':
      return typeof v.date === 'string' && !Number.isNaN(toTime(v.date)) ? undefined : bad;
    case 'dateRange':
      return typeof v.start === 'string' &&
        typeof v.end === 'string' &&
        !Number.isNaN(toTime(v.start)) &&
        !Number.isNaN(toTime(v.end))
        ? undefined
        : bad;
  }
}

/** Why a rule list is malformed, or undefined. */
export function rulesProblem(rules: unknown, where = 'rules'): string | undefined {
  if (!Array.isArray(rules)) return `${where} must be an array`;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i];
    const at = `${where}[${i}]`;
    if (!isObj(r)) return `${at} must be an object`;
    if (r.conditionLogic !== undefined && r.conditionLogic !== 'and') return `${at}.conditionLogic must be "and"`;
    if (r.treatment !== 'true' && r.treatment !== 'false') return `${at}.treatment must be "true" or "false"`;
    if (!Array.isArray(r.conditions)) return `${at}.conditions must be an array`;
    for (let j = 0; j < r.conditions.length; j++) {
      const p = conditionProblem(r.conditions[j], `${at}.conditions[${j}]`);
      if (p) return p;
    }
  }
  return undefined;
}

/** `undefined`: the attribute is missing or of the wrong type, so the condition is false whatever `negate` says. */
type Test = (attr: unknown) => boolean | undefined;

const DAY = 86_400_000;

function compileTest(c: Condition): Test {
  const v = c.value;
  const str =
    (f: (s: string) => boolean): Test =>
    (a) =>
      typeof a === 'string' ? f(a) : isNum(a) ? f(String(a)) : undefined;
  const num =
    (f: (n: number) => boolean): Test =>
    (a) =>
      isNum(a) ? f(a) : undefined;
  const date =
    (f: (t: number) => boolean): Test =>
    (a) => {
      const t = toTime(a);
      return Number.isNaN(t) ? undefined : f(t);
    };
  switch (c.op) {
    case 'in_list': {
      const set = new Set(v.list as string[]);
      return str((s) => set.has(s));
    }
    case 'starts_with': {
      const l = v.list as string[];
      return str((s) => l.some((p) => s.startsWith(p)));
    }
    case 'ends_with': {
      const l = v.list as string[];
      return str((s) => l.some((p) => s.endsWith(p)));
    }
    case 'contains': {
      const l = v.list as string[];
      return str((s) => l.some((p) => s.includes(p)));
    }
    case 'matches': {
      let re: RegExp;
      try {
        re = new RegExp(v.string as string);
      } catch {
        return () => undefined;
      }
      return str((s) => re.test(s));
    }
    case 'equal': {
      const n = v.number as number;
      return num((a) => a === n);
    }
    case 'greater_than': {
      const n = v.number as number;
      return num((a) => a > n);
    }
    case 'greater_than_equal': {
      const n = v.number as number;
      return num((a) => a >= n);
    }
    case 'lower_than': {
      const n = v.number as number;
      return num((a) => a < n);
    }
    case 'lower_than_equal': {
      const n = v.number as number;
      return num((a) => a <= n);
    }
    case 'between_numeric': {
      const s = v.start as number,
        e = v.end as number;
      return num((a) => a >= s && a <= e);
    }
    case 'is': {
      const b = v.boolean as boolean;
      return (a) => (typeof a === 'boolean' ? a === b : undefined);
    }
    case 'on': {
      const d = Math.floor(toTime(v.date) / DAY);
      return date((t) => Math.floor(t / DAY) === d);
    }
    case 'on_or_after': {
      const d = toTime(v.date);
      return date((t) => t >= d);
    }
    case 'on_or_before': {
      const d = toTime(v.date);
      return date((t) => t <= d);
    }
    case 'between_date': {
      const s = toTime(v.start),
        e = toTime(v.end);
      return date((t) => t >= s && t <= e);
    }
    default:
      return () => undefined;
  }
}

export type Attributes = Record<string, unknown>;
export type CompiledCondition = (attrs: Attributes) => boolean;

/** Reads `a.b.c` as a flat key first, then as a path into nested objects. */
export function readAttribute(attrs: Attributes, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(attrs, name)) return attrs[name];
  if (!name.includes('.')) return undefined;
  let cur: unknown = attrs;
  for (const part of name.split('.')) {
    if (!isObj(cur) || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

export function compileCondition(c: Condition): CompiledCondition {
  const test = compileTest(c);
  const negate = c.negate === true;
  return (attrs) => {
    const a = readAttribute(attrs, c.attribute);
    if (a === undefined || a === null) return false;
    const r = test(a);
    if (r === undefined) return false;
    return negate ? !r : r;
  };
}

export interface CompiledRule {
  holds: (attrs: Attributes) => boolean;
  treatment: boolean;
}

/** Rules that are not well formed (possible only in a hand-made snapshot) never hold. */
export function compileRules(rules: readonly Rule[] | undefined): CompiledRule[] {
  return (rules ?? []).map((r) => {
    if (rulesProblem([r]) !== undefined) return { holds: () => false, treatment: false };
    const conds = r.conditions.map(compileCondition);
    return { holds: (attrs) => conds.every((c) => c(attrs)), treatment: r.treatment === 'true' };
  });
}

/** The treatment of a rule set: the first rule whose conditions all hold, else the default. */
export function treatmentOf(rules: CompiledRule[], attrs: Attributes, defaultTreatment: boolean): boolean {
  for (const r of rules) if (r.holds(attrs)) return r.treatment;
  return defaultTreatment;
}

/**
 * Whether a pattern has the shape behind catastrophic backtracking: a quantified group (`*`, `+`, `{n,}`) whose body
 * holds a quantifier or an alternation, as in `(a+)+` or `(a|aa)*`. Conservative: it refuses some safe patterns too.
 * The `matches` operator runs on request attributes in the agent, so such a pattern would let a caller stall it.
 */
export function catastrophic(pattern: string): boolean {
  const open: boolean[] = []; // per open group: has its body a quantifier or an alternation?
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    if (c === '(') {
      open.push(false);
      continue;
    }
    if (c === ')') {
      const risky = open.pop() ?? false;
      const next = pattern[i + 1];
      const repeated = next === '*' || next === '+' || (next === '{' && /^\{\d*,/.test(pattern.slice(i + 1)));
      if (risky && repeated) return true;
      if (open.length > 0 && (risky || repeated)) open[open.length - 1] = true;
      continue;
    }
    if ((c === '*' || c === '+' || c === '{' || c === '|') && open.length > 0) open[open.length - 1] = true;
  }
  return false;
}
