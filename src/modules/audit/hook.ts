import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Sql } from '../../storage/sql.ts';
import type { AuditInput } from './entry.ts';
import type { AuditService } from './service.ts';
import { AppError, errorBody } from '../../http/errors.ts';
import { actionOf, describe } from './actions.ts';

export { NAMED_ACTIONS } from './actions.ts';

/**
 * What the hook reads to make an entry readable (wired by the app; absent in a bare instance): the display value of a
 * user (email) or account (name), and the user a sign-in identifier names (a failed sign-in belongs to that user's
 * account). A failed look-up leaves the entry as it would be without it.
 */
export interface AuditLookups {
  display(type: 'user' | 'account', id: string): Promise<string | undefined>;
  user(
    identifier: string,
    by: 'email' | 'username',
  ): Promise<{ id: string; tenantId: string | null; email: string } | undefined>;
}

/** What the look-ups found for one entry. */
interface Resolved {
  targetDisplay?: string;
  signIn?: { id: string; tenantId: string | null; email: string };
}

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
 * `item`, or `cte(first)` with `values` as its parameters from `first`; `stored()` once that statement has
 * committed, so onSend does not stage the entry again. Until `stored()` the hook stages as usual (an error answer records the failure).
 */
export interface InlineAudit {
  /** The item as a storage/sql.ts fragment. `onlyIf`: an earlier WITH item; staged only when it returns a row. */
  item: (onlyIf?: string) => Sql;
  /** The item as text with parameters from `first` (`values`), for a statement that numbers its own. */
  cte: (first: number, onlyIf?: string) => string;
  values: unknown[];
  stored: () => void;
}

/** `req.auditInline`: the request's entry for a success answer, or undefined when the route is not audited. */
export type AuditInlineOf = (status: number, body: Record<string, unknown>) => InlineAudit | undefined;

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const STAGED = Symbol('auditStaged');
/** The target's display value read before the handler ran (a DELETE removes what names it). */
const BEFORE = Symbol('auditDisplayBefore');

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
  const segments = url
    .split('/')
    .filter((s) => s && !s.startsWith(':') && !/^v\d+(\.\d+)?$/.test(s) && s !== 'resources');
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

const signInIdentifier = (reqBody: Record<string, unknown>) => str(reqBody.email) ?? str(reqBody.username);

/** Who acted, as a person reads it: a user's email, else the credential's kind and id. */
function actorDisplay(
  req: FastifyRequest,
  actor: AuditInput['actor'],
  body: Record<string, unknown> | undefined,
  reqBody: Record<string, unknown>,
): string {
  if (actor.type === 'anonymous') return 'anonymous';
  if (actor.type === 'user') {
    const claims = req.auth?.kind === 'user' && !req.auth.actor ? req.auth.claims : undefined;
    return str(claims?.email) ?? str(body?.userEmail) ?? signInIdentifier(reqBody) ?? actor.id ?? 'user';
  }
  return `${actor.type} ${actor.id ?? ''}`.trim();
}

/** The target's display value that the request or its answer shows (an email, a name, a key). */
function displayFromBodies(
  type: string | null | undefined,
  reqBody: Record<string, unknown>,
  body: Record<string, unknown> | undefined,
): string | undefined {
  const b = body ?? {};
  if (type === 'user') return str(b.email) ?? str(b.userEmail) ?? str(reqBody.email);
  if (type === 'account') return str(b.name) ?? str(reqBody.name);
  const keys = ['name', 'displayName', 'userName', 'key', 'title', 'email'];
  for (const k of keys) if (str(b[k])) return b[k] as string;
  for (const k of keys) if (str(reqBody[k])) return reqBody[k] as string;
  return undefined;
}

const lookupType = (type: string | null | undefined) => (type === 'user' || type === 'account' ? type : undefined);

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
export function installAudit(app: FastifyInstance, audit: AuditService, lookups?: AuditLookups): void {
  if (!audit.enabled) return;
  if (lookups) {
    // A DELETE's target is gone after the handler: its display value is read first (one look-up by primary key).
    app.addHook('preHandler', async (req) => {
      const url = req.routeOptions.url;
      if (req.method !== 'DELETE' || !url || req.routeOptions.config?.audit === false) return;
      const target = targetOf(url, (req.params ?? {}) as Record<string, string>);
      const type = lookupType(target?.type);
      if (!type || !target) return;
      const display = await lookups.display(type, target.id).catch(() => undefined);
      (req as unknown as Record<symbol, string | undefined>)[BEFORE] = display;
    });
  }
  app.decorateRequest('auditInline', function (this: FastifyRequest, status: number, body: Record<string, unknown>):
    | InlineAudit
    | undefined {
    const url = this.routeOptions.url;
    const config = this.routeOptions.config;
    if (!WRITE.has(this.method) || !url || config?.audit === false) return undefined;
    const entry = audit.inline(entryOf(this, status, url, config?.audit, body, undefined));
    const self = this as unknown as Record<symbol, boolean>;
    return {
      item: entry.item,
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
    const resolved = lookups
      ? await resolve(req, reply.statusCode, url, config?.audit, body, lookups).catch(() => ({}))
      : {};
    try {
      await audit.record(entryOf(req, reply.statusCode, url, config?.audit, body, errorCode, resolved));
    } catch (err) {
      // A streamed answer that will not be sent is closed here.
      if (payload && typeof (payload as { destroy?: unknown }).destroy === 'function')
        (payload as { destroy(): void }).destroy();
      // The answer becomes the wire error body (an error thrown here would bypass the app's error handler).
      const e = err instanceof AppError ? err : new AppError('AUDIT_UNAVAILABLE');
      reply.code(e.status).header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify(errorBody(e));
    }
    return payload;
  });
}

const bodyOf = (req: FastifyRequest) =>
  (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
const actionFor = (req: FastifyRequest, url: string, configured: string | false | undefined) =>
  actionOf(req.method, url, typeof configured === 'string' ? configured : undefined);

function targetFor(
  req: FastifyRequest,
  url: string,
  action: string,
  actor: AuditInput['actor'],
  body: Record<string, unknown> | undefined,
) {
  let target: AuditInput['target'] = req.auditTarget ?? targetOf(url, (req.params ?? {}) as Record<string, string>);
  if (!target && body && req.method === 'POST') target = targetFromBody(url, body);
  if (!target && req.auth?.kind === 'user' && /\/me(\/|$)/.test(url)) target = { type: 'user', id: req.auth.userId };
  if (!target && actor.type === 'user' && action.startsWith('user.')) target = { type: 'user', id: actor.id ?? '' };
  return target;
}

/**
 * The look-ups an entry needs (onSend only; the inline path of a sign-in has what it needs): the user a failed
 * sign-in named, or the display value of a user or account target that neither the request nor the answer shows.
 */
async function resolve(
  req: FastifyRequest,
  status: number,
  url: string,
  configured: string | false | undefined,
  body: Record<string, unknown> | undefined,
  lookups: AuditLookups,
): Promise<Resolved> {
  const action = actionFor(req, url, configured);
  const reqBody = bodyOf(req);
  if (action === 'user.sign_in' && status >= 400) {
    const identifier = signInIdentifier(reqBody)?.trim().toLowerCase();
    if (!identifier) return {};
    return { signIn: await lookups.user(identifier, str(reqBody.email) ? 'email' : 'username') };
  }
  const target = targetFor(req, url, action, actorOf(req, body), body);
  const type = lookupType(target?.type);
  if (!type || !target?.id || displayFromBodies(type, reqBody, body)) return {};
  const before = (req as unknown as Record<symbol, string | undefined>)[BEFORE];
  return { targetDisplay: before ?? (await lookups.display(type, target.id)) };
}

function entryOf(
  req: FastifyRequest,
  status: number,
  url: string,
  configured: string | false | undefined,
  body: Record<string, unknown> | undefined,
  errorCode: string | undefined,
  resolved: Resolved = {},
): AuditInput {
  const action = actionFor(req, url, configured);
  const params = (req.params ?? {}) as Record<string, string>;
  const reqBody = bodyOf(req);
  const actor = actorOf(req, body);
  let target = targetFor(req, url, action, actor, body);
  // A failed sign-in of a known user is that user's, in the user's account; an unknown identifier stays anonymous.
  if (resolved.signIn) target = { type: 'user', id: resolved.signIn.id };
  const tenantId =
    (req.auth?.kind === 'user' ? req.auth.tenantId : undefined) ??
    req.auditTenantId ??
    str(req.headers['gatehouse-tenant-id']) ??
    str(req.headers['frontegg-tenant-id']) ??
    str(params.tenantId) ??
    str(reqBody.tenantId) ??
    str(body?.tenantId) ??
    resolved.signIn?.tenantId ??
    null;
  const data: Record<string, unknown> = { method: req.method, path: url, statusCode: status };
  if (errorCode) data.errorCode = errorCode;
  if (action === 'user.sign_in') {
    data.identifier = signInIdentifier(reqBody) ?? null;
    if (body?.mfaRequired === true) data.mfaRequired = true;
  }
  const outcome = status < 400 ? 'success' : 'failure';
  const targetDisplay =
    resolved.signIn?.email ??
    displayFromBodies(target?.type, reqBody, body) ??
    resolved.targetDisplay ??
    (action === 'user.sign_in' ? signInIdentifier(reqBody) : undefined) ??
    target?.id ??
    undefined;
  const who = actorDisplay(req, actor, body, reqBody);
  if (targetDisplay) data.targetDisplay = targetDisplay.slice(0, 255);
  data.actorDisplay = who.slice(0, 255);
  const error = errorCode ?? (outcome === 'failure' ? String(status) : null);
  data.description = describe({ action, target: targetDisplay, actor: who, outcome, error });
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
