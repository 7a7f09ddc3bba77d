import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditInput } from './entry.ts';
import type { AuditService } from './service.ts';
import { AppError, errorBody } from '../../http/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The audit action name of a write route (default: `METHOD /route/path`); `false`: the route records its own entry. */
    audit?: string | false;
  }
  interface FastifyRequest {
    /** Set by a route whose caller is not a `req.auth` token (e.g. a SCIM connection): the audit actor. */
    auditActor?: { type: string; id: string | null };
    /** Set by a route whose caller's account is not in a token or header (a SCIM connection's account). */
    auditTenantId?: string;
    /** Set by a route to name its target when the path and response do not show it. */
    auditTarget?: { type: string; id: string | null };
    /**
     * Present when auditing is on: the entry this request's answer `status` with `body` would get, for a hot path that
     * stores it in its own statement (`InlineAudit`). Only the fields the entry reads from an answer matter (`userId`,
     * `id`, `tenantId`). Undefined when the route is not audited.
     */
    auditInline?: AuditInlineOf;
  }
}

/**
 * A success entry stored by the route's own statement (a WITH item; one round trip fewer than onSend's INSERT):
 * `cte(first)` with `values` as its parameters from `first`; `stored()` once that statement has committed, so onSend
 * does not stage the entry again. Until `stored()` the hook stages as usual (an error answer records the failure).
 */
export interface InlineAudit {
  /** `onlyIf`: the name of an earlier WITH item; the entry is staged only when that item returns a row. */
  cte: (first: number, onlyIf?: string) => string;
  values: unknown[];
  stored: () => void;
}

/** `req.auditInline`: the request's entry for a success answer, or undefined when the route is not audited. */
export type AuditInlineOf = (status: number, body: Record<string, unknown>) => InlineAudit | undefined;

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const STAGED = Symbol('auditStaged');

/** Readable action names for the sign-in routes (every other write is `METHOD /route/path`). */
export const NAMED_ACTIONS: Record<string, string> = {
  'POST /identity/resources/auth/v1/user': 'user.sign_in',
  'POST /identity/resources/auth/v1/user/token/refresh': 'user.token_refresh',
  'POST /identity/resources/auth/v1/logout': 'user.sign_out',
  'POST /auth/vendor': 'vendor.sign_in',
};

/** The entity a path parameter names: `userId` → user, `tenantId` → account, `id` → the path segment before it. */
function targetOf(url: string, params: Record<string, string>): { type: string; id: string } | undefined {
  const names = Object.keys(params).filter((k) => /id$/i.test(k) && typeof params[k] === 'string');
  const name = names[names.length - 1];
  if (!name) return undefined;
  let type = name.replace(/Id$/, '').replace(/^id$/i, '');
  if (!type) {
    const segments = url.split('/').filter((s) => s && !s.startsWith(':') && !/^v\d+(\.\d+)?$/.test(s));
    type = (segments[segments.length - 1] ?? 'resource').replace(/s$/, '');
  }
  if (type === 'tenant') type = 'account';
  return { type, id: params[name] };
}

/** The record a create answered: a user, an account (by tenantId), else the path's resource by `id`. */
function targetFromBody(url: string, body: Record<string, unknown>): { type: string; id: string } | undefined {
  if (str(body.userId)) return { type: 'user', id: body.userId as string };
  if (/\/users(\/|$)/.test(url) && str(body.id)) return { type: 'user', id: body.id as string };
  if (url.startsWith('/tenants/') && str(body.tenantId)) return { type: 'account', id: body.tenantId as string };
  if (!str(body.id)) return undefined;
  const segments = url.split('/').filter((s) => s && !s.startsWith(':') && !/^v\d+(\.\d+)?$/.test(s) && s !== 'resources');
  return { type: (segments[segments.length - 1] ?? 'resource').replace(/s$/, ''), id: body.id as string };
}

function actorOf(req: FastifyRequest, body: Record<string, unknown> | undefined): AuditInput['actor'] {
  if (req.auditActor) return req.auditActor;
  const auth = req.auth;
  if (auth?.kind === 'vendor') return { type: auth.scopes.length ? 'apiToken' : 'vendor', id: auth.clientId };
  if (auth?.kind === 'user') return auth.actor ?? { type: 'user', id: auth.userId };
  // A sign-in flow answers the login response (wire.md section 4): the user it identified acts.
  if (body && typeof body.userId === 'string') return { type: 'user', id: body.userId };
  return { type: 'anonymous', id: null };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/**
 * Audits every write route (POST/PUT/PATCH/DELETE) of the instance, whatever plugin registered it, with the caller,
 * the account, IP, user agent, the route as action, the target and the outcome. Request bodies are never stored
 * (only the sign-in identifier of a sign-in route). Must be installed on the root instance before the modules'
 * routes are registered.
 *
 * Durability: the entry is staged (one INSERT, awaited) in `onSend`, the last hook before Fastify writes the status
 * line and body, and the first that sees the final status code and the serialised answer (success or error alike;
 * `preSerialization` runs only for object payloads, before error handling is final; `onResponse` runs after the
 * bytes are out). So a
 * client never holds an answer whose entry is not stored. Root hooks run before encapsulated plugins' `onSend`
 * hooks; none of those may change the status code. If the entry cannot be stored, the answer becomes 503
 * AUDIT_UNAVAILABLE (the change itself may have been applied: the message says so).
 */
export function installAudit(app: FastifyInstance, audit: AuditService): void {
  if (!audit.enabled) return;
  app.decorateRequest('auditInline', function (this: FastifyRequest, status: number, body: Record<string, unknown>): InlineAudit | undefined {
    const url = this.routeOptions.url;
    const config = this.routeOptions.config;
    if (!WRITE.has(this.method) || !url || config?.audit === false) return undefined;
    const entry = audit.inline(entryOf(this, status, url, config?.audit, body, undefined));
    const self = this as unknown as Record<symbol, boolean>;
    return {
      cte: entry.cte,
      values: entry.values,
      stored: () => {
        self[STAGED] = true;
        entry.staged();
      },
    };
  });
  app.addHook('onSend', async (req, reply, payload) => {
    if (!WRITE.has(req.method)) return payload;
    const url = req.routeOptions.url;
    const config = req.routeOptions.config;
    if (!url || config?.audit === false) return payload;
    const self = req as unknown as Record<symbol, boolean>;
    if (self[STAGED]) return payload; // the AUDIT_UNAVAILABLE answer of a failed staging is not recorded again
    self[STAGED] = true;
    let body: Record<string, unknown> | undefined;
    let errorCode: string | undefined;
    if (typeof payload === 'string' && payload.length < 65536 && payload.startsWith('{')) {
      try {
        body = JSON.parse(payload);
        if (reply.statusCode >= 400) {
          errorCode = str(body?.errorCode);
          body = undefined;
        }
      } catch {
        /* not JSON */
      }
    }
    try {
      await audit.record(entryOf(req, reply.statusCode, url, config?.audit, body, errorCode));
    } catch (err) {
      // A streamed answer that will not be sent is closed here.
      if (payload && typeof (payload as { destroy?: unknown }).destroy === 'function') (payload as { destroy(): void }).destroy();
      // The answer becomes the wire error body (an error thrown here would bypass the app's error handler).
      const e = err instanceof AppError ? err : new AppError('AUDIT_UNAVAILABLE');
      reply.code(e.status).header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify(errorBody(e));
    }
    return payload;
  });
}

function entryOf(req: FastifyRequest, status: number, url: string, configured: string | false | undefined, body: Record<string, unknown> | undefined, errorCode: string | undefined): AuditInput {
  const key = `${req.method} ${url}`;
  const action = (typeof configured === 'string' ? configured : undefined) ?? NAMED_ACTIONS[key] ?? key;
  const params = (req.params ?? {}) as Record<string, string>;
  const reqBody = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const actor = actorOf(req, body);
  let target = req.auditTarget ?? targetOf(url, params);
  if (!target && body && req.method === 'POST') target = targetFromBody(url, body);
  if (!target && req.auth?.kind === 'user' && /\/me(\/|$)/.test(url)) target = { type: 'user', id: req.auth.userId };
  if (!target && actor.type === 'user' && action.startsWith('user.')) target = { type: 'user', id: actor.id ?? '' };
  const tenantId = (req.auth?.kind === 'user' ? req.auth.tenantId : undefined) ?? req.auditTenantId
    ?? str(req.headers['gatehouse-tenant-id']) ?? str(req.headers['frontegg-tenant-id'])
    ?? str(params.tenantId) ?? str(reqBody.tenantId) ?? str(body?.tenantId) ?? null;
  const data: Record<string, unknown> = { method: req.method, path: url, statusCode: status };
  if (errorCode) data.errorCode = errorCode;
  if (action === 'user.sign_in') {
    data.identifier = str(reqBody.email) ?? str(reqBody.username) ?? null;
    if (body?.mfaRequired === true) data.mfaRequired = true;
  }
  const outcome = status < 400 ? 'success' : 'failure';
  return {
    tenantId,
    actor,
    action,
    target,
    outcome,
    ip: req.ip ?? null,
    userAgent: str(req.headers['user-agent']) ?? null,
    severity: status >= 500 ? 'Error' : outcome === 'failure' ? 'Medium' : 'Info',
    data,
  };
}
