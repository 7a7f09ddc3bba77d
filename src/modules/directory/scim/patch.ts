import { scimPatch, ScimError, type ScimPatchOperation } from 'scim-patch';
import { Tester, parse } from 'scim2-parse-filter';
import { AppError } from '../../../http/errors.ts';
import { requirePath, URN, type ResourceKind } from './schemas.ts';

/**
 * PATCH (RFC 7644 3.5.2) through `scim-patch`, wrapped where it falls short:
 * - ops are matched case-insensitively ("Replace" from Entra ID); anything but add/remove/replace is `invalidSyntax`
 *   (the library would crash on a capitalised "Remove" without path);
 * - every path is checked against the schema first (unknown attribute → `invalidPath`) and rewritten to canonical
 *   spelling, because the library looks keys up case-sensitively;
 * - an op without path whose value has dotted or URN-prefixed keys (`"name.givenName"`, as Entra ID sends) is split
 *   into one op per such key;
 * - value filters in paths compare strings case-insensitively (the library's tester compares with ===, but the
 *   sub-attributes it is used on — type, value, display — are caseExact false), and `pr` treats null as absent.
 *   The tester is shared by `scim-patch` only; the list filters are translated to SQL (filter.ts).
 * Group `members` ops are not given to the library (members live in their own table; see groups.service.ts).
 */

const lc = (x: unknown) => (typeof x === 'string' ? x.toLowerCase() : x);
const proto = Tester.prototype as unknown as Record<string, (r: unknown, v: unknown) => boolean>;
proto.eq = (r, v) => lc(r) === lc(v);
proto.ne = (r, v) => lc(r) !== lc(v);
proto.pr = (r) => r !== undefined && r !== null && r !== '' && !(Array.isArray(r) && r.length === 0);

export interface PatchOp {
  op: 'add' | 'remove' | 'replace';
  path?: string;
  value?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `emails[type eq "work"].value` → { attr: 'emails', filter: 'type eq "work"', sub: 'value' }. */
function splitPath(path: string): { attr: string; filter?: string; sub?: string } {
  const m = /^([^[\]]+)\[(.+)\](?:\.([A-Za-z$][\w$-]*))?$/s.exec(path.trim());
  if (!m) return { attr: path.trim() };
  return { attr: m[1], filter: m[2], sub: m[3] };
}

/** Checks a path against the schema and gives its canonical spelling (the filter inside brackets is kept). */
export function canonicalPath(
  kind: ResourceKind,
  path: string,
): { path: string; attrName: string; extension: string; readOnly: boolean } {
  const { attr, filter, sub } = splitPath(path);
  const rp = requirePath(kind, attr);
  if (filter !== undefined) {
    if (!rp.attr.multiValued || rp.sub)
      throw new AppError('SCIM_INVALID_PATH', `${attr}[...] needs a multi-valued attribute`);
    try {
      parse(filter);
    } catch (err) {
      throw new AppError(
        'SCIM_INVALID_PATH',
        `The value filter in path "${path}" is malformed: ${(err as Error).message}`,
      );
    }
    const subAttr =
      sub === undefined ? undefined : rp.attr.subAttributes?.find((s) => s.name.toLowerCase() === sub.toLowerCase());
    if (sub !== undefined && !subAttr)
      throw new AppError('SCIM_INVALID_PATH', `${rp.attr.name} has no sub-attribute ${sub}`);
    return {
      path: `${rp.canonical}[${filter}]${subAttr ? `.${subAttr.name}` : ''}`,
      attrName: rp.attr.name,
      extension: rp.extension,
      readOnly: rp.attr.mutability === 'readOnly',
    };
  }
  const readOnly = rp.attr.mutability === 'readOnly' || rp.sub?.mutability === 'readOnly';
  return { path: rp.canonical, attrName: rp.attr.name, extension: rp.extension, readOnly };
}

function tryPath(kind: ResourceKind, path: string): ReturnType<typeof canonicalPath> | undefined {
  try {
    return canonicalPath(kind, path);
  } catch {
    return undefined;
  }
}

/** Validates the PatchOp body and returns its operations with ops lower-cased and paths canonical. */
export function readPatchBody(kind: ResourceKind, body: unknown): PatchOp[] {
  if (!isObject(body)) throw new AppError('SCIM_INVALID_SYNTAX', 'The body must be a PatchOp JSON object');
  const schemas = body.schemas;
  if (
    !Array.isArray(schemas) ||
    !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === URN.patch.toLowerCase())
  ) {
    throw new AppError('SCIM_INVALID_SYNTAX', `schemas must contain ${URN.patch}`);
  }
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops) || ops.length === 0)
    throw new AppError('SCIM_INVALID_SYNTAX', 'Operations must be a non-empty array');
  const out: PatchOp[] = [];
  ops.forEach((raw, i) => {
    if (!isObject(raw)) throw new AppError('SCIM_INVALID_SYNTAX', `Operations[${i}] must be an object`);
    const op = typeof raw.op === 'string' ? raw.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'remove' && op !== 'replace')
      throw new AppError(
        'SCIM_INVALID_SYNTAX',
        `Operations[${i}].op must be add, remove or replace (got ${JSON.stringify(raw.op)})`,
      );
    const path = raw.path;
    if (path !== undefined && path !== null && (typeof path !== 'string' || path.trim() === ''))
      throw new AppError('SCIM_INVALID_PATH', `Operations[${i}].path must be a non-empty string`);
    if (op === 'remove' && !path) throw new AppError('SCIM_NO_TARGET', `Operations[${i}]: remove needs a path`);
    if (op !== 'remove' && !('value' in raw))
      throw new AppError('SCIM_INVALID_SYNTAX', `Operations[${i}]: ${op} needs a value`);
    if (path && (path as string).trim().toLowerCase() === URN.enterprise.toLowerCase()) {
      // The whole extension as the target: one op per attribute of it (the library cannot address a URN alone).
      if (op === 'remove') {
        out.push({ op, path: `${URN.enterprise}:employeeNumber` });
        for (const a of ['costCenter', 'organization', 'division', 'department', 'manager'])
          out.push({ op, path: `${URN.enterprise}:${a}` });
        return;
      }
      if (!isObject(raw.value))
        throw new AppError('SCIM_INVALID_VALUE', `Operations[${i}]: the value of ${URN.enterprise} must be an object`);
      for (const [ek, ev] of Object.entries(raw.value)) {
        const c = tryPath(kind, `${URN.enterprise}:${ek}`);
        if (c && !c.readOnly) out.push({ op, path: c.path, value: ev });
      }
      return;
    }
    if (path) {
      const c = canonicalPath(kind, path as string);
      if (c.readOnly) throw new AppError('SCIM_MUTABILITY', `Operations[${i}]: ${path} is read-only`);
      out.push({ op, path: c.path, value: raw.value });
      return;
    }
    if (!isObject(raw.value))
      throw new AppError(
        'SCIM_INVALID_SYNTAX',
        `Operations[${i}]: without a path, value must be an object of attributes`,
      );
    const plain: Record<string, unknown> = {};
    const core = `${(kind === 'User' ? URN.user : URN.group).toLowerCase()}:`;
    const ext = `${URN.enterprise.toLowerCase()}:`;
    for (const [k, v] of Object.entries(raw.value)) {
      const lower = k.toLowerCase();
      if (kind === 'User' && lower === URN.enterprise.toLowerCase()) {
        if (!isObject(v))
          throw new AppError(
            'SCIM_INVALID_VALUE',
            `Operations[${i}]: the value of ${URN.enterprise} must be an object`,
          );
        for (const [ek, ev] of Object.entries(v)) {
          const c = tryPath(kind, `${URN.enterprise}:${ek}`);
          if (c && !c.readOnly) out.push({ op, path: c.path, value: ev });
        }
        continue;
      }
      const rest = lower.startsWith(core) ? k.slice(core.length) : k;
      if (lower.startsWith(ext) || rest.includes('.') || rest.includes('[')) {
        // `"name.givenName": "x"` or a URN-prefixed attribute: a path op of its own. Unknown ones are ignored.
        const c = tryPath(kind, k);
        if (c && !c.readOnly) out.push({ op, path: c.path, value: v });
      } else plain[rest] = v;
    }
    // Canonical spelling of plain keys; read-only ones (id, meta, groups) are ignored.
    const canon: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(plain)) {
      let c: ReturnType<typeof canonicalPath>;
      try {
        c = canonicalPath(kind, k);
      } catch {
        continue;
      }
      if (!c.readOnly) canon[c.path] = v;
    }
    if (Object.keys(canon).length) out.push({ op, value: canon });
  });
  return out;
}

/** Applies operations to a resource (a copy); library errors become SCIM errors with their scimType. */
export function applyPatch<T extends Record<string, unknown>>(resource: T, ops: PatchOp[]): T {
  // The library keeps extension attributes under the URN key, as we store them.
  try {
    return scimPatch(resource as never, ops as unknown as ScimPatchOperation[], {
      mutateDocument: false,
      treatMissingAsAdd: true,
    }) as unknown as T;
  } catch (err) {
    if (err instanceof ScimError) {
      const code =
        err.scimCode === 'noTarget'
          ? 'SCIM_NO_TARGET'
          : err.scimCode === 'invalidValue'
            ? 'SCIM_INVALID_VALUE'
            : err.scimCode === 'invalidPath'
              ? 'SCIM_INVALID_PATH'
              : 'SCIM_INVALID_SYNTAX';
      throw new AppError(code, err.message);
    }
    if (err instanceof AppError) throw err;
    throw new AppError('SCIM_INVALID_SYNTAX', `The PATCH could not be applied: ${(err as Error).message}`);
  }
}
