import { AppError } from '../../http/errors.ts';

/**
 * A template's claims: a JSON object whose values are constants, or strings holding `{{reference}}`s (the vendor's
 * template syntax). A string that is exactly one reference takes the referenced value with its type (an object, an
 * array, a boolean); references inside a longer string are interpolated as text. A reference without a value (an
 * absent metadata key, an unknown application) leaves the claim out, or interpolates as ''.
 */

/** What a template may read of the token being issued. */
export interface TokenFacts {
  userId: string;
  email?: string | null;
  name: string;
  verified: boolean;
  profilePictureUrl: string | null;
  metadata: Record<string, unknown>;
  tenantId: string;
  tenantIds: string[];
  roles: string[];
  permissions: string[];
  sessionId: string;
  aud: string;
  applicationId?: string;
}

/**
 * Claims the platform sets itself: a template cannot set them (they carry identity, lifetime, authentication
 * strength and what the platform's own checks read). The vendor's default template lists some of them with their
 * own reference (e.g. `"sub": "{{sub}}"`); that exact value is accepted and ignored so such a template imports as is.
 */
const RESERVED: Record<string, string | undefined> = {
  iss: '{{iss}}',
  sub: '{{sub}}',
  aud: '{{aud}}',
  exp: '{{exp}}',
  iat: '{{iat}}',
  nbf: undefined,
  jti: undefined,
  sid: '{{sid}}',
  type: '{{type}}',
  userId: '{{user.id}}',
  tenantId: '{{user.tenantId}}',
  tenantIds: '{{user.tenantIds}}',
  roles: '{{user.tenant.roles}}',
  permissions: '{{user.tenant.permissions}}',
  amr: undefined,
  acr: undefined,
  auth_time: undefined,
  act: undefined,
};
export const RESERVED_CLAIMS = Object.keys(RESERVED);
const isReserved = (k: string) => Object.prototype.hasOwnProperty.call(RESERVED, k);

const FIXED: Record<string, (f: TokenFacts) => unknown> = {
  sub: (f) => f.userId,
  sid: (f) => f.sessionId,
  type: () => 'userToken',
  aud: (f) => f.aud,
  applicationId: (f) => f.applicationId,
  'user.id': (f) => f.userId,
  'user.email': (f) => f.email ?? undefined,
  'user.name': (f) => f.name,
  'user.verified': (f) => f.verified,
  'user.profilePictureUrl': (f) => f.profilePictureUrl ?? '',
  'user.metadata': (f) => f.metadata,
  'user.tenantId': (f) => f.tenantId,
  'user.tenantIds': (f) => f.tenantIds,
  'user.tenant.roles': (f) => f.roles,
  'user.tenant.permissions': (f) => f.permissions,
};
export const REFERENCES = [...Object.keys(FIXED), 'user.metadata.<key>'];
const METADATA = /^user\.metadata\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const REF = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const MAX_DEPTH = 5;
const MAX_CLAIMS = 100;
const MAX_BYTES = 8192;

function knownRef(path: string): boolean {
  return Object.prototype.hasOwnProperty.call(FIXED, path) || METADATA.test(path);
}

function resolve(path: string, f: TokenFacts): unknown {
  const fixed = FIXED[path];
  if (fixed) return fixed(f);
  let cur: unknown = f.metadata;
  for (const part of path.slice('user.metadata.'.length).split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Throws a 400 naming the claim when `claims` is not a valid template (reserved claim, unknown reference, size). */
export function checkClaims(claims: unknown, where = 'body.templateSchema.claims'): void {
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
    throw new AppError('VALIDATION', `${where} must be an object of claim names and values`);
  const entries = Object.entries(claims);
  if (entries.length > MAX_CLAIMS) throw new AppError('VALIDATION', `${where} may hold at most ${MAX_CLAIMS} claims`);
  if (JSON.stringify(claims).length > MAX_BYTES)
    throw new AppError('VALIDATION', `${where} must be at most ${MAX_BYTES} characters as JSON`);
  for (const [name, value] of entries) {
    if (name.length === 0 || name.length > 100)
      throw new AppError('VALIDATION', `${where}: a claim name must be 1 to 100 characters`);
    if (isReserved(name)) {
      const own = RESERVED[name];
      if (own !== undefined && typeof value === 'string' && value.replace(/\s+/g, '') === own) continue;
      throw new AppError(
        'JWT_TEMPLATE_RESERVED_CLAIM',
        `${where}.${name}: the claim "${name}" is set by the platform and cannot be overridden (reserved: ${RESERVED_CLAIMS.join(', ')})`,
      );
    }
    checkValue(value, `${where}.${name}`, 0);
  }
}

function checkValue(v: unknown, where: string, depth: number): void {
  if (depth > MAX_DEPTH) throw new AppError('VALIDATION', `${where}: claims nest at most ${MAX_DEPTH} levels`);
  if (typeof v === 'string') {
    for (const m of v.matchAll(REF)) {
      if (!knownRef(m[1]))
        throw new AppError(
          'VALIDATION',
          `${where}: unknown reference {{${m[1]}}} (known: ${REFERENCES.map((r) => `{{${r}}}`).join(', ')})`,
        );
    }
  } else if (Array.isArray(v)) v.forEach((x, i) => checkValue(x, `${where}.${i}`, depth + 1));
  else if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v)) checkValue(x, `${where}.${k}`, depth + 1);
}

function renderValue(v: unknown, f: TokenFacts): unknown {
  if (typeof v === 'string') {
    const whole = WHOLE.exec(v);
    if (whole) return resolve(whole[1], f);
    if (!v.includes('{{')) return v;
    return v.replace(REF, (_, path: string) => {
      const r = resolve(path, f);
      if (r === undefined || r === null) return '';
      return typeof r === 'object' ? JSON.stringify(r) : String(r);
    });
  }
  if (Array.isArray(v)) return v.map((x) => renderValue(x, f)).filter((x) => x !== undefined);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = renderValue(x, f);
      if (r !== undefined) out[k] = r;
    }
    return out;
  }
  return v;
}

/** The claims of a checked template for one token; reserved claims (their accepted no-op form) are left out. */
export function render(claims: Record<string, unknown>, f: TokenFacts): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (isReserved(name)) continue;
    const r = renderValue(value, f);
    if (r !== undefined) out[name] = r;
  }
  return out;
}
