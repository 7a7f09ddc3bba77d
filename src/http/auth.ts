import type { FastifyInstance, FastifyRequest } from 'fastify';
import { holdsPermission } from '../lib/permissions.ts';
import { AppError } from './errors.ts';

export type TokenKind = 'vendor' | 'user';

export interface VendorAuth {
  kind: 'vendor';
  credentialId: string;
  clientId: string;
  scopes: string[];
}

export interface UserAuth {
  kind: 'user';
  userId: string;
  tenantId: string;
  tenantIds: string[];
  roles: string[];
  permissions: string[];
  sessionId?: string;
  claims: Record<string, unknown>;
  /**
   * Set when a machine token acts: `type` is the JWT type (`tenantApiToken`, `userApiToken`,
   * `tenantAccessToken`, `userAccessToken`) and `id` the token's id. For account tokens `userId` is that id too (no
   * user has it); for user tokens it is the owning user. Audit records the actor from here.
   */
  actor?: { type: string; id: string };
}

export type AuthContext = VendorAuth | UserAuth;

/**
 * An identity-changing route (emails, password, MFA factors, sign-in phones, personal tokens, username): user tokens
 * must be the user's own signed-in session, and (unless `recent` is false) authenticated within RECENT_AUTH_MAX_AGE.
 * `recent: false` is for routes that re-check the current password themselves, or that only refuse acting tokens.
 * `when`: the rule applies only to requests whose (validated) body it accepts (a profile update naming a phone).
 * Environment tokens pass: the environment owns every identity.
 */
export interface IdentityRule {
  recent?: boolean;
  when?: (body: unknown) => boolean;
}

/** What a route accepts: `public`, or token kinds with an optional permission that user tokens must hold. */
export type AuthSpec =
  | 'public'
  | { kinds: TokenKind[]; permission?: string; optional?: boolean; identity?: IdentityRule };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthSpec;
  }
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

/** Route config helpers: `{ config: guard.vendor }`, `{ config: guard.any('fe.x.read') }`. */
export const guard = {
  public: { auth: 'public' as AuthSpec },
  vendor: { auth: { kinds: ['vendor'] } as AuthSpec },
  user: (permission?: string) => ({ auth: { kinds: ['user'], permission } as AuthSpec }),
  any: (permission?: string) => ({ auth: { kinds: ['vendor', 'user'], permission } as AuthSpec }),
  /** No token needed; a token that is sent is still verified and sets `req.auth`. */
  optional: { auth: { kinds: ['vendor', 'user'], optional: true } as AuthSpec },
  /** An identity-changing route (see IdentityRule): environment or user tokens, the rule applied to user tokens. */
  identity: (rule: IdentityRule & { permission?: string; userOnly?: boolean } = {}) => {
    const { permission, userOnly, ...identity } = rule;
    return { auth: { kinds: userOnly ? ['user'] : ['vendor', 'user'], permission, identity } as AuthSpec };
  },
};

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Whether a user token acts for someone else: impersonation or delegation (`act` claim, or their `amr`). */
export function isActingToken(auth: UserAuth): boolean {
  const amr = strings(auth.claims.amr);
  return auth.claims.act !== undefined || amr.includes('impersonation') || amr.includes('delegation');
}

/**
 * The identity rule for a user token: a human session (no machine token, no acting token, a session id), and with
 * `recent`, an `auth_time` at most `maxAge` seconds old.
 */
export function checkIdentity(auth: UserAuth, recent: boolean, maxAge: number): void {
  if (auth.actor) {
    throw new AppError(
      'HUMAN_SESSION_REQUIRED',
      `This route changes who the user is: a ${auth.actor.type} cannot call it; the user must sign in`,
    );
  }
  if (isActingToken(auth)) {
    throw new AppError(
      'HUMAN_SESSION_REQUIRED',
      'This route changes who the user is: an impersonation or delegated token cannot call it',
    );
  }
  if (!auth.sessionId)
    throw new AppError(
      'HUMAN_SESSION_REQUIRED',
      'This route changes who the user is: the token belongs to no sign-in session',
    );
  if (!recent) return;
  const at = auth.claims.auth_time;
  const age = typeof at === 'number' ? Date.now() / 1000 - at : Infinity;
  if (!(age <= maxAge)) {
    throw new AppError(
      'RECENT_AUTHENTICATION_REQUIRED',
      `This route needs an authentication within the last ${maxAge} s: re-authenticate with POST /identity/resources/auth/v1/user/step-up/generate {password} (or {code} of your authenticator app), then call again with its accessToken; users without a password sign in again`,
    );
  }
}

export type Authenticate = (token: string) => Promise<AuthContext>;

function bearer(req: FastifyRequest): { token: string; via: 'authorization' | 'x-access-token' } | undefined {
  const h = req.headers.authorization;
  if (typeof h === 'string' && h.length > 0) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (!m) throw new AppError('UNAUTHENTICATED', 'Authorization header must be "Bearer <token>"');
    return { token: m[1], via: 'authorization' };
  }
  const x = req.headers['x-access-token'];
  if (typeof x === 'string' && x.length > 0) return { token: x, via: 'x-access-token' };
  return undefined;
}

/** The service a route belongs to: its first path segment (`tenants`, `identity`, …); used for credential scopes. */
const serviceOf = (url: string) => url.split('/')[1] ?? '';

/**
 * Installs the guard: every route must declare `config.auth` (checked when the route is added, so a forgotten guard
 * is a start-up error, never an open route). Runs at onRequest, before the body is parsed or validated.
 */
export interface GuardOptions {
  /** Seconds an authentication stays recent (RECENT_AUTH_MAX_AGE). */
  recentAuthMaxAge: number;
  /** Throws unless a user token's session and membership are still live (auth/liveness.ts). */
  checkLive?: (auth: UserAuth) => Promise<void>;
}

export function installAuth(
  app: FastifyInstance,
  authenticate: Authenticate,
  opts: GuardOptions = { recentAuthMaxAge: 300 },
): void {
  app.addHook('onRoute', (route) => {
    const spec = route.config?.auth;
    if (!spec) {
      if (route.url.startsWith('/docs')) {
        route.config = { ...route.config, auth: 'public' };
        return;
      }
      throw new Error(`route ${route.method} ${route.url} declares no auth`);
    }
    if (spec !== 'public' && route.schema) {
      // An optional token is documented as "none or bearer" (the empty requirement object).
      const security = spec.optional ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }];
      route.schema = { ...route.schema, security } as typeof route.schema;
    }
  });

  app.addHook('onRequest', async (req) => {
    const spec = req.routeOptions.config.auth;
    if (!spec || spec === 'public') return;
    const found = bearer(req);
    if (!found) {
      if (spec.optional) return;
      throw new AppError('UNAUTHENTICATED');
    }
    const ctx = await authenticate(found.token);
    if (found.via === 'x-access-token' && ctx.kind !== 'vendor')
      throw new AppError('INVALID_TOKEN', 'x-access-token carries environment tokens only');
    if (!spec.kinds.includes(ctx.kind)) {
      throw new AppError(
        'WRONG_TOKEN_KIND',
        `This route accepts ${spec.kinds.map((k) => (k === 'vendor' ? 'environment' : 'user')).join(' or ')} tokens only`,
      );
    }
    if (ctx.kind === 'vendor' && ctx.scopes.length > 0) {
      const service = serviceOf(req.routeOptions.url ?? '');
      const ok = ctx.scopes.some(
        (s) => s === service || (s === `${service}:read` && (req.method === 'GET' || req.method === 'HEAD')),
      );
      if (!ok)
        throw new AppError(
          'SCOPE_DENIED',
          `The credential's scopes (${ctx.scopes.join(', ')}) do not cover ${req.method} /${service}`,
        );
    }
    // A session or membership that ended stops its access tokens (machine tokens check their own row; optional-token
    // routes such as logout must still work with a dead session's token).
    if (ctx.kind === 'user' && !ctx.actor && !spec.optional) await opts.checkLive?.(ctx);
    if (ctx.kind === 'user' && spec.permission && !holdsPermission(ctx.permissions, spec.permission)) {
      throw new AppError('MISSING_PERMISSION', `This route needs the permission ${spec.permission}`);
    }
    // The identity rule: here, before the body is read, unless it depends on the body (then at preHandler).
    if (ctx.kind === 'user' && spec.identity && !spec.identity.when)
      checkIdentity(ctx, spec.identity.recent !== false, opts.recentAuthMaxAge);
    req.auth = ctx;
  });

  app.addHook('preHandler', async (req) => {
    const spec = req.routeOptions.config.auth;
    if (!spec || spec === 'public' || !spec.identity?.when || req.auth?.kind !== 'user') return;
    if (spec.identity.when(req.body)) checkIdentity(req.auth, spec.identity.recent !== false, opts.recentAuthMaxAge);
  });
}

/** The tenant header, under its own name or its compatibility alias. */
export function tenantHeader(req: FastifyRequest): string | undefined {
  const v = req.headers['gatehouse-tenant-id'] ?? req.headers['frontegg-tenant-id'];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}

/** The account a call acts on: the user token's active account, or the tenant header of an environment call. */
export function accountOf(req: FastifyRequest): string {
  const auth = req.auth;
  if (auth?.kind === 'user') return auth.tenantId;
  const header = tenantHeader(req);
  if (!header) throw new AppError('TENANT_HEADER_REQUIRED');
  return header;
}
