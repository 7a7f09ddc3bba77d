import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db } from '../../storage/db.ts';
import { routeDto, write } from './records.ts';
import * as store from './store.ts';

/**
 * Route rules from an OpenAPI 3.x or Swagger 2.0 document (POST /entitlements/resources/routes/v1/import-open-api).
 * One route per operation, in document order, after the existing routes. The path keeps OpenAPI's `{param}` segments
 * (the engine's own syntax), prefixed with the document's base path (Swagger `basePath`, or the path of the first
 * OpenAPI server URL), since that is the path the app's requests carry. An operation may say how it is guarded with
 * `x-gatehouse-policy` (`allow` | `deny` | `ruleBased`) and `x-gatehouse-rules` (`[{type: feature|permission, value}]`);
 * with rules and no policy it is `ruleBased`, with neither it takes `defaultPolicyType` (default `deny`, so an import
 * opens nothing by itself). A method and path that already have a route are skipped and reported, never changed.
 */
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const POLICIES = new Set(['allow', 'deny', 'ruleBased']);
const MAX_OPERATIONS = 2000;

type Policy = 'allow' | 'deny' | 'ruleBased';
interface Planned {
  method: string;
  path: string;
  policyType: Policy;
  description: string;
  rules: { type: string; value: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function basePath(doc: Record<string, unknown>): string {
  let base = '';
  if (typeof doc.basePath === 'string') base = doc.basePath;
  else if (Array.isArray(doc.servers) && isObject(doc.servers[0]) && typeof doc.servers[0].url === 'string') {
    const url = doc.servers[0].url;
    try {
      base = new URL(url, 'http://relative.invalid').pathname;
    } catch {
      throw new AppError('VALIDATION', `body.servers[0].url is not a URL: ${url.slice(0, 100)}`);
    }
  }
  return base.replace(/\/+$/, '');
}

function rulesOf(op: Record<string, unknown>, where: string): { type: string; value: string }[] {
  const raw = op['x-gatehouse-rules'];
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 100)
    throw new AppError('VALIDATION', `${where}.x-gatehouse-rules must be an array of at most 100 {type, value}`);
  return raw.map((r, i) => {
    if (
      !isObject(r) ||
      (r.type !== 'feature' && r.type !== 'permission') ||
      typeof r.value !== 'string' ||
      r.value.length === 0 ||
      r.value.length > 255
    ) {
      throw new AppError(
        'VALIDATION',
        `${where}.x-gatehouse-rules[${i}] must be {type: "feature" | "permission", value: a key of 1-255 characters}`,
      );
    }
    return { type: r.type, value: r.value };
  });
}

/** Reads the document into the routes it describes; 400 naming the field for anything malformed. */
export function planImport(
  doc: unknown,
  defaultPolicyType: Policy,
): { planned: Planned[]; ignored: { method: string; path: string; reason: string }[] } {
  if (!isObject(doc) || (typeof doc.openapi !== 'string' && typeof doc.swagger !== 'string')) {
    throw new AppError(
      'VALIDATION',
      'body must be an OpenAPI 3.x or Swagger 2.0 document (with "openapi" or "swagger" and "paths")',
    );
  }
  if (!isObject(doc.paths)) throw new AppError('VALIDATION', 'body.paths must be an object of paths');
  const base = basePath(doc);
  const planned: Planned[] = [];
  const ignored: { method: string; path: string; reason: string }[] = [];
  for (const [rawPath, item] of Object.entries(doc.paths)) {
    if (!rawPath.startsWith('/'))
      throw new AppError('VALIDATION', `body.paths["${rawPath.slice(0, 100)}"] must start with "/"`);
    if (!isObject(item))
      throw new AppError('VALIDATION', `body.paths["${rawPath.slice(0, 100)}"] must be an object of operations`);
    const path = `${base}${rawPath}`;
    if (path.length > 2048)
      throw new AppError('VALIDATION', `body.paths["${rawPath.slice(0, 100)}…"] is longer than 2048 characters`);
    for (const key of Object.keys(item)) {
      const m = key.toLowerCase();
      if (['head', 'options', 'trace'].includes(m))
        ignored.push({ method: m.toUpperCase(), path, reason: 'method not supported by route rules' });
    }
    for (const m of METHODS) {
      const op = item[m];
      if (op === undefined) continue;
      const where = `body.paths["${rawPath.slice(0, 100)}"].${m}`;
      if (!isObject(op)) throw new AppError('VALIDATION', `${where} must be an operation object`);
      const rules = rulesOf(op, where);
      const declared = op['x-gatehouse-policy'];
      if (declared !== undefined && !(typeof declared === 'string' && POLICIES.has(declared))) {
        throw new AppError('VALIDATION', `${where}.x-gatehouse-policy must be "allow", "deny" or "ruleBased"`);
      }
      const policyType = (declared as Policy | undefined) ?? (rules.length > 0 ? 'ruleBased' : defaultPolicyType);
      const summary =
        typeof op.summary === 'string' ? op.summary : typeof op.operationId === 'string' ? op.operationId : '';
      planned.push({ method: m.toUpperCase(), path, policyType, description: summary.slice(0, 4096), rules });
      if (planned.length > MAX_OPERATIONS)
        throw new AppError('VALIDATION', `body.paths has more than ${MAX_OPERATIONS} operations`);
    }
  }
  return { planned, ignored };
}

export function createOpenApiImport(db: Db) {
  return async function importOpenApi(doc: unknown, defaultPolicyType: Policy = 'deny') {
    const { planned, ignored } = planImport(doc, defaultPolicyType);
    const ids: string[] = [];
    const skipped = [...ignored];
    await write(
      db,
      async (tx) => {
        await store.bumpOffset(tx); // serialises priorities, as a single create does
        const existing = new Set((await store.routes(tx)).map((r) => `${r.method} ${r.path}`));
        let priority = await store.nextPriority(tx);
        for (const p of planned) {
          const key = `${p.method} ${p.path}`;
          if (existing.has(key)) {
            skipped.push({ method: p.method, path: p.path, reason: 'a route for this method and path exists' });
            continue;
          }
          existing.add(key);
          const id = newId();
          await store.insertRow(tx, 'entitlement_routes', {
            id,
            method: p.method,
            path: p.path,
            policy_type: p.policyType,
            description: p.description,
            priority: priority++,
            rules: p.rules.map((r) => ({ id: newId(), ...r })),
          });
          ids.push(id);
        }
      },
      () =>
        new AppError(
          'ROUTE_EXISTS',
          'A route was created for one of these methods and paths meanwhile; retry the import',
        ),
    );
    const created = ids.length ? await store.routes(db, ids) : [];
    return { created: created.map(routeDto), skipped };
  };
}
