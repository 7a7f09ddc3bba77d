import { AppError } from '../../../http/errors.ts';
import {
  commonAttributes,
  enterpriseAttributes,
  groupAttributes,
  resolvePath,
  URN,
  userAttributes,
  type Attr,
  type ResourceKind,
} from './schemas.ts';

/**
 * Incoming resources are normalised to the schema: attribute names take their canonical spelling (names are
 * case-insensitive), string booleans ("False", as Entra ID sends) become booleans, a single complex value where a
 * list belongs becomes a list of one, read-only and unknown attributes are dropped, and at most one value of a
 * multi-valued attribute stays primary. What is stored is what is returned.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function coerce(attr: Attr, v: unknown, at: string): unknown {
  if (v === null || v === undefined) return undefined;
  switch (attr.type) {
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
      throw new AppError('SCIM_INVALID_VALUE', `${at} must be a boolean`);
    case 'integer':
    case 'decimal':
      if (typeof v === 'number') return v;
      if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
      throw new AppError('SCIM_INVALID_VALUE', `${at} must be a number`);
    case 'dateTime':
      if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) return v;
      throw new AppError('SCIM_INVALID_VALUE', `${at} must be an xsd:dateTime string`);
    case 'complex': {
      if (!isObject(v)) throw new AppError('SCIM_INVALID_VALUE', `${at} must be an object`);
      const out: Json = {};
      for (const [k, x] of Object.entries(v)) {
        const sub = attr.subAttributes?.find((s) => s.name.toLowerCase() === k.toLowerCase());
        if (!sub || sub.mutability === 'readOnly') continue;
        const c = coerce(sub, x, `${at}.${sub.name}`);
        if (c !== undefined) out[sub.name] = c;
      }
      return out;
    }
    default:
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw new AppError('SCIM_INVALID_VALUE', `${at} must be a string`);
  }
}

function normaliseAttr(attr: Attr, v: unknown, at: string): unknown {
  if (!attr.multiValued) {
    // Entra ID sends the manager as a bare id.
    if (attr.name === 'manager' && typeof v === 'string') v = { value: v };
    if (attr.type === 'complex' && Array.isArray(v)) v = v[0];
    const c = coerce(attr, v, at);
    return isObject(c) && Object.keys(c).length === 0 ? undefined : c;
  }
  if (v === null || v === undefined) return undefined;
  const list = Array.isArray(v) ? v : [v];
  const out = list
    .map((x, i) => coerce(attr, x, `${at}[${i}]`))
    .filter((x) => x !== undefined && !(isObject(x) && Object.keys(x).length === 0));
  let primarySeen = false;
  for (const x of out) {
    if (isObject(x) && x.primary === true) {
      if (primarySeen) x.primary = false;
      primarySeen = true;
    }
  }
  return out.length ? out : undefined;
}

function normaliseObject(attrs: Attr[], input: Json, at: string, out: Json): void {
  for (const [key, v] of Object.entries(input)) {
    const attr = attrs.find((x) => x.name.toLowerCase() === key.toLowerCase());
    if (!attr || attr.mutability === 'readOnly' || attr.returned === 'never') continue;
    const n = normaliseAttr(attr, v, `${at}${attr.name}`);
    if (n === undefined) delete out[attr.name];
    else out[attr.name] = n;
  }
}

/** Normalised attributes of a User (without id, meta, groups); 400 when userName is missing. */
export function normaliseUser(input: unknown): Json {
  if (!isObject(input)) throw new AppError('SCIM_INVALID_SYNTAX', 'The body must be a JSON object');
  const out: Json = {};
  const core: Json = {};
  let ext: Json | undefined;
  for (const [k, v] of Object.entries(input)) {
    const lower = k.toLowerCase();
    if (lower === URN.enterprise.toLowerCase()) {
      if (v === null || v === undefined) continue;
      if (!isObject(v)) throw new AppError('SCIM_INVALID_VALUE', `${URN.enterprise} must be an object`);
      ext = { ...(ext ?? {}), ...v };
    } else if (lower.startsWith(`${URN.enterprise.toLowerCase()}:`)) {
      ext = { ...(ext ?? {}), [k.slice(URN.enterprise.length + 1)]: v };
    } else if (lower.startsWith(`${URN.user.toLowerCase()}:`)) {
      core[k.slice(URN.user.length + 1)] = v;
    } else core[k] = v;
  }
  normaliseObject([...commonAttributes.filter((x) => x.name === 'externalId'), ...userAttributes], core, '', out);
  if (ext) {
    const e: Json = {};
    normaliseObject(enterpriseAttributes, ext, `${URN.enterprise}:`, e);
    if (Object.keys(e).length) out[URN.enterprise] = e;
  }
  if (typeof out.userName !== 'string' || out.userName.trim() === '')
    throw new AppError('SCIM_INVALID_VALUE', 'userName is required (a non-empty string)');
  out.userName = out.userName.trim();
  if (out.active === undefined) out.active = true;
  return out;
}

/**
 * The `password` a body carries (writeOnly, returned never): read before normalising, which drops it, so that it is
 * only ever hashed into user management and never kept in the SCIM data. Any casing, core URN prefix allowed.
 */
export function passwordOf(input: unknown): string | undefined {
  if (!isObject(input)) return undefined;
  const names = ['password', `${URN.user.toLowerCase()}:password`];
  let found: unknown;
  for (const [k, v] of Object.entries(input)) {
    if (names.includes(k.toLowerCase()) && v !== null && v !== undefined) found = v;
  }
  if (found === undefined) return undefined;
  if (typeof found !== 'string' || found === '') {
    throw new AppError('SCIM_INVALID_VALUE', 'password must be a non-empty string');
  }
  return found;
}

export interface NormalGroup {
  data: Json;
  members: string[] | undefined;
}

/** Normalised attributes of a Group; `members` are the member ids (undefined when the body has no members). */
export function normaliseGroup(input: unknown): NormalGroup {
  if (!isObject(input)) throw new AppError('SCIM_INVALID_SYNTAX', 'The body must be a JSON object');
  const data: Json = {};
  const rest: Json = {};
  let members: unknown;
  for (const [k, v] of Object.entries(input)) {
    const key = k.toLowerCase().startsWith(`${URN.group.toLowerCase()}:`) ? k.slice(URN.group.length + 1) : k;
    if (key.toLowerCase() === 'members') members = v;
    else rest[key] = v;
  }
  normaliseObject(
    [
      ...commonAttributes.filter((x) => x.name === 'externalId'),
      ...groupAttributes.filter((x) => x.name !== 'members'),
    ],
    rest,
    '',
    data,
  );
  if (typeof data.displayName !== 'string' || data.displayName.trim() === '')
    throw new AppError('SCIM_INVALID_VALUE', 'displayName is required (a non-empty string)');
  data.displayName = data.displayName.trim();
  return {
    data,
    members: members === undefined || members === null ? (members === null ? [] : undefined) : memberIds(members),
  };
}

export function memberIds(v: unknown): string[] {
  const list = Array.isArray(v) ? v : [v];
  const ids = list.map((m, i) => {
    const id = isObject(m) ? m.value : m;
    if (typeof id !== 'string' || !id)
      throw new AppError('SCIM_INVALID_VALUE', `members[${i}].value must be a string (a User id)`);
    return id;
  });
  return [...new Set(ids)];
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * The address user management uses: the first valid address of `emails`, primary first (a directory may mark a value
 * that is no address primary, as Entra's test collection does), else an email-shaped userName; lower-cased.
 * Undefined when there is none. The SCIM resource keeps every address as given.
 */
export function emailOf(data: Json): string | undefined {
  const emails = Array.isArray(data.emails) ? (data.emails as Json[]).filter(isObject) : [];
  const ordered = [...emails.filter((e) => e.primary === true), ...emails.filter((e) => e.primary !== true)];
  const candidates = [...ordered.map((e) => e.value), data.userName];
  for (const v of candidates) {
    const e = typeof v === 'string' ? v.trim().toLowerCase() : '';
    if (EMAIL.test(e)) return e;
  }
  return undefined;
}

/** The display name Gatehouse shows: displayName, else given and family name, else formatted, else userName. */
export function displayOf(data: Json): string {
  const name = isObject(data.name) ? data.name : {};
  const given = [name.givenName, name.familyName].filter((x) => typeof x === 'string' && x).join(' ');
  return (data.displayName as string) || given || (name.formatted as string) || (data.userName as string) || '';
}

export const etagOf = (version: number) => `W/"${version}"`;

/** RFC 7232 If-Match: `*` or a list of entity tags; weak comparison. */
export function ifMatchHolds(header: string | string[] | undefined, version: number): boolean {
  if (header === undefined) return true;
  const h = (Array.isArray(header) ? header.join(',') : header).trim();
  if (h === '*') return true;
  const want = String(version);
  return h.split(',').some((t) => t.trim().replace(/^W\//i, '').replace(/^"|"$/g, '') === want);
}

/**
 * attributes / excludedAttributes (RFC 7644 3.4.2.5, 3.9): `id` and `schemas` always come back; sub-attribute paths
 * (`name.givenName`) and extension paths keep or drop parts of a complex value. Unknown names are ignored.
 */
export function project(kind: ResourceKind, resource: Json, attributes?: string, excluded?: string): Json {
  const parse = (s?: string) =>
    s
      ? s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
          .map((x) => resolvePath(kind, x))
          .filter((x) => x !== undefined)
      : [];
  const keyOf = (ext: string, name: string) => (ext ? ext : name);
  const inc = parse(attributes);
  if (inc.length) {
    const out: Json = { schemas: resource.schemas, id: resource.id };
    for (const p of inc) {
      const top = keyOf(p.extension, p.attr.name);
      const holder = p.extension ? (resource[p.extension] as Json | undefined) : resource;
      if (!holder) continue;
      const target = p.extension ? ((out[top] as Json | undefined) ?? ((out[top] = {}) as Json)) : out;
      const name = p.attr.name === p.extension ? undefined : p.attr.name;
      if (name === undefined) {
        out[top] = resource[p.extension];
        continue;
      }
      const value = holder[name];
      if (value === undefined) continue;
      if (!p.sub) target[name] = value;
      else if (Array.isArray(value))
        target[name] = value
          .map((x) => (isObject(x) && p.sub!.name in x ? { [p.sub!.name]: x[p.sub!.name] } : {}))
          .filter((x) => Object.keys(x).length);
      else if (isObject(value) && p.sub.name in value)
        target[name] = { ...((target[name] as Json) ?? {}), [p.sub.name]: value[p.sub.name] };
    }
    return out;
  }
  const exc = parse(excluded);
  if (!exc.length) return resource;
  const out: Json = JSON.parse(JSON.stringify(resource));
  for (const p of exc) {
    if (p.attr.name === 'id' || p.attr.name === 'schemas') continue;
    const holder = p.extension ? (out[p.extension] as Json | undefined) : out;
    if (!holder) continue;
    if (p.attr.name === p.extension) delete out[p.extension];
    else if (!p.sub) delete holder[p.attr.name];
    else {
      const value = holder[p.attr.name];
      if (Array.isArray(value)) for (const x of value) if (isObject(x)) delete x[p.sub.name];
      if (isObject(value)) delete value[p.sub.name];
    }
  }
  return out;
}
