import { parse, type Filter } from 'scim2-parse-filter';
import { AppError } from '../../../http/errors.ts';
import { requirePath, URN, type Attr, type AttrType, type ResourceKind } from './schemas.ts';

/**
 * SCIM filters (RFC 7644 section 3.4.2.2) to SQL. `scim2-parse-filter` parses (it matches the RFC's examples; two
 * gaps are covered here: the keywords true/false/null are case-insensitive in the RFC's ABNF, and it accepts `not`
 * without parentheses, which is harmless). Its in-memory tester is not used for lists: it compares case-sensitively
 * and treats null as present. Instead the whole tree is translated to one SQL condition over the resource row `r`,
 * with the RFC's case rules per attribute, so a `userName eq` hits the (connection, lower(userName)) index and no list
 * ever loads a connection's users into memory.
 */

const MAX_FILTER_LENGTH = 4096;
const MAX_DEPTH = 32;

/** The RFC keywords are case-insensitive: `active eq True` is valid. Lower-cases them outside quoted strings. */
function normaliseKeywords(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|\b(true|false|null)\b/gi, (m, kw: string | undefined) =>
    kw ? kw.toLowerCase() : m,
  );
}

export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH)
    throw new AppError('SCIM_INVALID_FILTER', `filter must be at most ${MAX_FILTER_LENGTH} characters`);
  try {
    return parse(normaliseKeywords(text));
  } catch (err) {
    throw new AppError('SCIM_INVALID_FILTER', `filter "${text}" is malformed: ${(err as Error).message}`);
  }
}

interface Col {
  sql: string;
  type: AttrType;
  caseExact: boolean;
}
/** How an attribute path is reached from the row: one value, a set of values (multi-valued), or a complex value. */
type Source =
  | { kind: 'value'; col: Col; present: string }
  | { kind: 'multi'; exists: (cond: string) => string; sub: (name: string) => Col | undefined; present: string }
  | { kind: 'complex'; present: string };

export class SqlParams {
  readonly values: unknown[] = [];
  constructor(start: unknown[] = []) {
    this.values.push(...start);
  }
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

const text = (sql: string, attr: Attr): Col => ({ sql, type: attr.type, caseExact: attr.caseExact });

/** Columns of the row for the attributes stored outside `data`. */
function columnOf(kind: ResourceKind, canonical: string): Col | undefined {
  const c = (sql: string, type: AttrType, caseExact: boolean): Col => ({ sql, type, caseExact });
  switch (canonical) {
    case 'id':
      return c('r.id::text', 'string', true);
    case 'externalId':
      return c('r.external_id', 'string', true);
    case 'meta.created':
      return c('r.created_at', 'dateTime', true);
    case 'meta.lastModified':
      return c('r.updated_at', 'dateTime', true);
    case 'meta.resourceType':
      return c(`'${kind}'`, 'string', true);
    case 'meta.version':
      return c(`('W/"' || r.version || '"')`, 'string', true);
    case 'displayName':
      return c('r.display_name', 'string', false);
  }
  if (kind === 'User' && canonical === 'userName') return c('r.user_name', 'string', false);
  if (kind === 'User' && canonical === 'active') return c('r.active', 'boolean', true);
  return undefined;
}

function jsonPath(p: SqlParams, extension: string, names: string[]): string {
  return p.add(extension ? [extension, ...names] : names);
}

function sourceOf(kind: ResourceKind, path: string, p: SqlParams): Source {
  const rp = requirePath(kind, path, 'SCIM_INVALID_FILTER');
  const { attr, sub, extension } = rp;
  if (attr.returned === 'never') throw new AppError('SCIM_INVALID_FILTER', `Attribute ${attr.name} cannot be filtered`);
  const col = columnOf(kind, rp.canonical);
  if (col) {
    const present =
      col.type === 'string' ? `(${col.sql} IS NOT NULL AND ${col.sql} <> '')` : `(${col.sql} IS NOT NULL)`;
    return { kind: 'value', col, present };
  }
  if (attr.name === 'schemas') throw new AppError('SCIM_INVALID_FILTER', 'schemas can be filtered with eq only');
  if (attr.name === 'meta') return { kind: 'complex', present: 'TRUE' };
  // Membership lives in its own table: User.groups and Group.members.
  if ((kind === 'User' && attr.name === 'groups') || (kind === 'Group' && attr.name === 'members')) {
    const userSide = kind === 'User';
    const join = userSide
      ? 'JOIN scim_groups o ON o.tenant_id = m.tenant_id AND o.connection_id = m.connection_id AND o.id = m.group_id'
      : 'JOIN scim_users o ON o.tenant_id = m.tenant_id AND o.connection_id = m.connection_id AND o.id = m.user_id';
    const exists = (cond: string) =>
      `EXISTS (SELECT 1 FROM scim_group_members m ${join} WHERE m.tenant_id = r.tenant_id AND m.connection_id = r.connection_id AND m.${userSide ? 'user_id' : 'group_id'} = r.id AND (${cond}))`;
    const subCol = (name: string): Col | undefined => {
      const n = name.toLowerCase();
      if (n === 'value')
        return { sql: `m.${userSide ? 'group_id' : 'user_id'}::text`, type: 'string', caseExact: true };
      if (n === 'display') return { sql: 'o.display_name', type: 'string', caseExact: false };
      if (n === 'type') return { sql: userSide ? `'direct'` : `'User'`, type: 'string', caseExact: false };
      return undefined;
    };
    if (sub) return single(subCol(sub.name), rp.canonical, exists);
    return { kind: 'multi', exists, sub: subCol, present: exists('TRUE') };
  }
  if (attr.multiValued) {
    const arr = `r.data #> ${jsonPath(p, extension, [attr.name])}`;
    const exists = (cond: string) =>
      `EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${arr}) = 'array' THEN ${arr} ELSE '[]'::jsonb END) e(v) WHERE ${cond})`;
    const subCol = (name: string): Col | undefined => {
      const s = attr.subAttributes?.find((x) => x.name.toLowerCase() === name.toLowerCase());
      return s ? text(`(e.v ->> ${p.add(s.name)})`, s) : undefined;
    };
    if (!attr.subAttributes)
      return {
        kind: 'multi',
        exists: (cond) => exists(cond.replaceAll('__elem__', "e.v #>> '{}'")),
        sub: () => undefined,
        present: `(jsonb_typeof(${arr}) = 'array' AND jsonb_array_length(${arr}) > 0)`,
      };
    if (sub) return single(subCol(sub.name), rp.canonical, exists);
    return {
      kind: 'multi',
      exists,
      sub: subCol,
      present: `(jsonb_typeof(${arr}) = 'array' AND jsonb_array_length(${arr}) > 0)`,
    };
  }
  if (attr.type === 'complex' && !sub) {
    const obj = `r.data #> ${jsonPath(p, extension, attr.name === extension ? [] : [attr.name])}`;
    return { kind: 'complex', present: `(jsonb_typeof(${obj}) = 'object' AND ${obj} <> '{}'::jsonb)` };
  }
  const leaf = sub ?? attr;
  const sql = `(r.data #>> ${jsonPath(p, extension, sub ? [attr.name, sub.name] : [attr.name])})`;
  return { kind: 'value', col: text(sql, leaf), present: `(${sql} IS NOT NULL AND ${sql} <> '')` };
}

/** `emails.type eq "work"`: the condition applies to any one element. */
function single(col: Col | undefined, canonical: string, exists: (cond: string) => string): Source {
  if (!col) throw new AppError('SCIM_INVALID_FILTER', `Attribute ${canonical} cannot be filtered`);
  return {
    kind: 'multi',
    exists,
    sub: (n) => (n === '__self__' ? col : undefined),
    present: exists(`${col.sql} IS NOT NULL`),
  };
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

function compare(col: Col, op: string, value: unknown, p: SqlParams, path: string): string {
  if (value === null) {
    if (op === 'eq') return `NOT (${col.sql} IS NOT NULL)`;
    if (op === 'ne') return `(${col.sql} IS NOT NULL)`;
    throw new AppError('SCIM_INVALID_FILTER', `${path} ${op} null is not a valid comparison`);
  }
  if (col.type === 'boolean') {
    const b =
      typeof value === 'boolean'
        ? value
        : typeof value === 'string' && /^(true|false)$/i.test(value)
          ? value.toLowerCase() === 'true'
          : undefined;
    if (b === undefined) throw new AppError('SCIM_INVALID_FILTER', `${path} is boolean: compare it with true or false`);
    if (op !== 'eq' && op !== 'ne')
      throw new AppError('SCIM_INVALID_FILTER', `${path} is boolean: only eq, ne and pr apply`);
    const lhs = col.sql.startsWith('r.') ? col.sql : `(${col.sql})::boolean`;
    const eq = `${lhs} = ${p.add(b)}`;
    return op === 'eq' ? eq : `NOT coalesce(${eq}, false)`;
  }
  if (col.type === 'dateTime') {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value)))
      throw new AppError('SCIM_INVALID_FILTER', `${path} is a dateTime: compare it with an xsd:dateTime string`);
    const sqlOp = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    if (!sqlOp) throw new AppError('SCIM_INVALID_FILTER', `${path} is a dateTime: ${op} does not apply`);
    const cmp = `${col.sql} ${op === 'ne' ? '=' : sqlOp} ${p.add(new Date(value).toISOString())}::timestamptz`;
    return op === 'ne' ? `NOT coalesce(${cmp}, false)` : cmp;
  }
  if (typeof value === 'boolean' || typeof value === 'number') value = String(value);
  const v = value as string;
  const lhs = col.caseExact ? col.sql : `lower(${col.sql})`;
  const rhs = (x: string) => (col.caseExact ? p.add(x) : `lower(${p.add(x)})`);
  switch (op) {
    case 'eq':
      return `${lhs} = ${rhs(v)}`;
    case 'ne':
      return `NOT coalesce(${lhs} = ${rhs(v)}, false)`;
    case 'co':
      return `${lhs} LIKE ${rhs(`%${likeEscape(v)}%`)}`;
    case 'sw':
      return `${lhs} LIKE ${rhs(`${likeEscape(v)}%`)}`;
    case 'ew':
      return `${lhs} LIKE ${rhs(`%${likeEscape(v)}`)}`;
    case 'gt':
      return `${lhs} > ${rhs(v)}`;
    case 'ge':
      return `${lhs} >= ${rhs(v)}`;
    case 'lt':
      return `${lhs} < ${rhs(v)}`;
    case 'le':
      return `${lhs} <= ${rhs(v)}`;
  }
  throw new AppError('SCIM_INVALID_FILTER', `Unknown operator ${op}`);
}

function compileNode(
  kind: ResourceKind,
  f: Filter,
  p: SqlParams,
  depth: number,
  element?: (name: string) => Col | undefined,
): string {
  if (depth > MAX_DEPTH) throw new AppError('SCIM_INVALID_FILTER', `filter nests deeper than ${MAX_DEPTH} levels`);
  switch (f.op) {
    case 'and':
    case 'or':
      return `(${f.filters.map((x) => compileNode(kind, x, p, depth + 1, element)).join(f.op === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      // Comparisons are left NULL-able so indexes apply (NULL acts as false under and/or); NOT turns NULL into false first.
      return `NOT coalesce((${compileNode(kind, f.filter, p, depth + 1, element)}), false)`;
    case '[]': {
      if (element) throw new AppError('SCIM_INVALID_FILTER', 'A value filter cannot contain another value filter');
      const src = sourceOf(kind, f.attrPath, p);
      if (src.kind !== 'multi')
        throw new AppError('SCIM_INVALID_FILTER', `${f.attrPath}[...] needs a multi-valued attribute`);
      return src.exists(
        compileNode(kind, f.valFilter, p, depth + 1, (name) => {
          const col = src.sub(name);
          if (!col) throw new AppError('SCIM_INVALID_FILTER', `${f.attrPath} has no sub-attribute ${name}`);
          return col;
        }),
      );
    }
    default: {
      if (element) {
        const col = element(f.attrPath);
        if (!col) throw new AppError('SCIM_INVALID_FILTER', `Unknown sub-attribute ${f.attrPath}`);
        return f.op === 'pr' ? `(${col.sql} IS NOT NULL)` : compare(col, f.op, f.compValue, p, f.attrPath);
      }
      if (f.attrPath.toLowerCase() === 'schemas') return schemasFilter(kind, f, p);
      const src = sourceOf(kind, f.attrPath, p);
      if (f.op === 'pr') return src.present;
      if (src.kind === 'complex')
        throw new AppError('SCIM_INVALID_FILTER', `${f.attrPath} is complex: compare one of its sub-attributes`);
      if (src.kind === 'value') return compare(src.col, f.op, f.compValue, p, f.attrPath);
      // A multi-valued attribute without a sub-attribute compares its `value` (RFC 7644 3.4.2.2).
      const col = src.sub('__self__') ??
        src.sub('value') ?? { sql: `(e.v #>> '{}')`, type: 'string' as const, caseExact: false };
      if (f.op === 'ne') return `NOT ${src.exists(compare(col, 'eq', f.compValue, p, f.attrPath))}`;
      return src.exists(compare(col, f.op, f.compValue, p, f.attrPath));
    }
  }
}

function schemasFilter(kind: ResourceKind, f: Filter, p: SqlParams): string {
  if (f.op !== 'eq' || typeof (f as { compValue?: unknown }).compValue !== 'string')
    throw new AppError('SCIM_INVALID_FILTER', 'schemas can be filtered with eq "<urn>" only');
  const v = (f as { compValue: string }).compValue.toLowerCase();
  if (v === (kind === 'User' ? URN.user : URN.group).toLowerCase()) return 'TRUE';
  if (kind === 'User' && v === URN.enterprise.toLowerCase()) return `(r.data ? ${p.add(URN.enterprise)})`;
  return 'FALSE';
}

/** The SQL condition of a filter over the row alias `r`; parameters are appended to `p`. */
export function filterToSql(kind: ResourceKind, filter: string, p: SqlParams): string {
  return compileNode(kind, parseFilter(filter), p, 0);
}

/** ORDER BY expression for `sortBy` (RFC 7644 3.4.2.3): multi-valued attributes sort by their primary (or first) value. */
export function sortToSql(kind: ResourceKind, sortBy: string, p: SqlParams): string {
  const rp = requirePath(kind, sortBy, 'SCIM_INVALID_PATH');
  const col = columnOf(kind, rp.canonical);
  if (col) return col.caseExact || col.type !== 'string' ? col.sql : `lower(${col.sql})`;
  const { attr, sub, extension } = rp;
  if (
    (kind === 'User' && attr.name === 'groups') ||
    (kind === 'Group' && attr.name === 'members') ||
    attr.name === 'meta' ||
    attr.name === 'schemas'
  )
    return 'NULL';
  if (attr.multiValued) {
    const arr = `r.data #> ${jsonPath(p, extension, [attr.name])}`;
    const key = p.add(sub?.name ?? 'value');
    return `(SELECT lower(e.v ->> ${key}) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${arr}) = 'array' THEN ${arr} ELSE '[]'::jsonb END) WITH ORDINALITY e(v, n) ORDER BY (e.v ->> 'primary') = 'true' DESC, n LIMIT 1)`;
  }
  if (attr.type === 'complex' && !sub)
    throw new AppError('SCIM_INVALID_PATH', `sortBy ${sortBy} is complex: name one of its sub-attributes`);
  const leaf = sub ?? attr;
  const sql = `(r.data #>> ${jsonPath(p, extension, sub ? [attr.name, sub.name] : [attr.name])})`;
  return leaf.caseExact ? sql : `lower(${sql})`;
}
