import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { dispatchedAtSql } from '../events/index.ts';
import { revocations } from '../../lib/revocations.ts';
import type { ClaimsSql, RoleClaims } from './tokens.ts';

export interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  amr: string[];
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
  /** When the user last proved who they are: the sign-in that started the session (column default), or a step-up. */
  auth_time: Date;
  last_used_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  revoke_reason: string | null;
}

export interface SessionPolicyRow {
  scope: string;
  idle_timeout_seconds: number | null;
  absolute_timeout_seconds: number | null;
  max_concurrent: number | null;
  updated_at: Date;
}

/** A new session with its first refresh token, in one statement. */
export async function insertSession(q: Queryable, s: { id: string; tenantId: string; userId: string; amr: string[]; ip?: string; userAgent?: string; expiresAt: Date; tokenHash: string }) {
  await q.query(
    `WITH session AS (
       INSERT INTO sessions (id, tenant_id, user_id, amr, ip, user_agent, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
     INSERT INTO refresh_tokens (token_hash, session_id) SELECT $8, id FROM session`,
    [s.id, s.tenantId, s.userId, s.amr, s.ip ?? null, s.userAgent?.slice(0, 512) ?? null, s.expiresAt, s.tokenHash],
  );
}

/** The session behind a refresh token, locked, with whether that token was already rotated. */
export async function sessionByRefresh(q: Queryable, tokenHash: string): Promise<(SessionRow & { rotated_at: Date | null }) | undefined> {
  const { rows } = await q.query<SessionRow & { rotated_at: Date | null }>(
    `SELECT s.*, rt.rotated_at FROM refresh_tokens rt JOIN sessions s ON s.id = rt.session_id WHERE rt.token_hash = $1 FOR UPDATE OF s`,
    [tokenHash],
  );
  return rows[0];
}

/** Marks the old refresh token rotated, adds the new one and touches the session, in one statement. */
export async function rotate(q: Queryable, sessionId: string, oldHash: string, newHash: string, tenantId: string): Promise<void> {
  await q.query(
    `WITH rotated AS (UPDATE refresh_tokens SET rotated_at = now() WHERE token_hash = $2),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($3, $1))
     UPDATE sessions SET last_used_at = now(), tenant_id = $4 WHERE id = $1`,
    [sessionId, oldHash, newHash, tenantId],
  );
}

// The hot-path reads of sign-in and refresh (one JSON value each) live in views-store.ts.
export * from './views-store.ts';

// ---- The statements of sign-in and refresh (see docs/performance.md, "Identity": as few round trips as possible) ----

/** Statement texts composed with the token issuer's claims part: constant per process once the role sources are registered. */
const composed = new Map<string, string>();
function compose(key: string, build: () => string): string {
  let text = composed.get(key);
  if (text === undefined) {
    text = prepared(build());
    composed.set(key, text);
  }
  return text;
}

/**
 * The rotation of a refresh: the token `oldHash` marked rotated on the condition that it is still unrotated and its
 * session not revoked, the new token `newHash` added, the session touched, and the new access token's role claims
 * read (`claims`, numbered from $4), in one statement that needs no transaction of its own. `audit`, when given, is
 * the request's audit entry (a WITH item, numbered after the claims), stored only when the token rotates. Answers
 * undefined when the token did not rotate (another request used it first, or the session was revoked meanwhile):
 * nothing was written then. Two concurrent uses of one token cannot both rotate it: the second UPDATE waits for the
 * first's row lock and, once that commits, re-checks `rotated_at IS NULL` on the new row version (READ COMMITTED).
 */
export async function rotateWithClaims(
  q: Queryable,
  r: { sessionId: string; oldHash: string; newHash: string },
  claims: ClaimsSql,
  audit?: { cte: (first: number, onlyIf?: string) => string; values: unknown[] },
): Promise<RoleClaims | undefined> {
  const auditAt = 4 + claims.params.length;
  const sql = compose(`rotate:${claims.cte}:${audit ? auditAt : '-'}`, () =>
    `WITH rotated AS (
            UPDATE refresh_tokens SET rotated_at = now()
             WHERE token_hash = $2 AND rotated_at IS NULL AND session_id = $1
               AND EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL)
            RETURNING session_id),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT $3, session_id FROM rotated),
          touched AS (UPDATE sessions SET last_used_at = now() WHERE id IN (SELECT session_id FROM rotated)),${audit ? `
          ${audit.cte(auditAt, 'rotated')},` : ''}
          ${claims.cte}
     SELECT EXISTS (SELECT 1 FROM rotated) AS rotated, ${claims.select}`);
  const { rows } = await q.query<RoleClaims & { rotated: boolean }>(sql, [r.sessionId, r.oldHash, r.newHash, ...claims.params, ...(audit?.values ?? [])]);
  const { rotated, ...roleClaims } = rows[0];
  return rotated ? roleClaims : undefined;
}

/**
 * An access token re-issued for a live session (no refresh token rotated): the session touched on the condition that
 * it is not revoked, and the token's role claims read (`claims`, numbered from $2), in one statement. Answers
 * undefined when the session was revoked meanwhile (nothing written then).
 */
export async function touchWithClaims(q: Queryable, sessionId: string, claims: ClaimsSql): Promise<RoleClaims | undefined> {
  const sql = compose(`touch:${claims.cte}`, () =>
    `WITH touched AS (UPDATE sessions SET last_used_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id),
          ${claims.cte}
     SELECT EXISTS (SELECT 1 FROM touched) AS touched, ${claims.select}`);
  const { rows } = await q.query<RoleClaims & { touched: boolean }>(sql, [sessionId, ...claims.params]);
  const { touched, ...roleClaims } = rows[0];
  return touched ? roleClaims : undefined;
}

/**
 * A step-up (re-authentication) of a live session, in one statement: the session's `auth_time` set to now and the
 * session touched on the condition that it is not revoked, its unrotated refresh tokens marked rotated and `newHash`
 * added (as a refresh rotates), the user's failed attempts reset (as a sign-in does), and the token's role claims
 * read (`claims`, numbered from $4). Answers undefined when the session was revoked meanwhile (nothing written then).
 */
export async function stepUpWithClaims(
  q: Queryable,
  r: { sessionId: string; userId: string; newHash: string },
  claims: ClaimsSql,
): Promise<(RoleClaims & { authTime: Date }) | undefined> {
  const sql = compose(`step-up:${claims.cte}`, () =>
    `WITH stepped AS (UPDATE sessions SET auth_time = now(), last_used_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id, auth_time),
          rotated AS (UPDATE refresh_tokens SET rotated_at = now() WHERE session_id IN (SELECT id FROM stepped) AND rotated_at IS NULL),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT $3, id FROM stepped),
          reset AS (UPDATE users SET failed_attempts = 0 WHERE id = $2 AND failed_attempts <> 0 AND EXISTS (SELECT 1 FROM stepped)),
          ${claims.cte}
     SELECT (SELECT auth_time FROM stepped) AS auth_time, ${claims.select}`);
  const { rows } = await q.query<RoleClaims & { auth_time: Date | null }>(sql, [r.sessionId, r.userId, r.newHash, ...claims.params]);
  const { auth_time, ...roleClaims } = rows[0];
  return auth_time ? { ...roleClaims, authTime: new Date(auth_time) } : undefined;
}

/**
 * A flow's own writes made by the session-start statement (e.g. the MFA verify's TOTP step and mfaToken spent):
 * WITH items `ctes(first)` with `values` numbered from `first`; `key` names the text (constant per key). `check` is a
 * select expression that raises an error when those writes did not happen (e.g. a cast of a marker text to boolean),
 * so the whole statement, session included, is undone, with or without a transaction around it.
 */
export interface SessionGuard {
  key: string;
  ctes: (first: number) => string;
  values: unknown[];
  check: string;
}

/** A WITH item and its parameters, numbered from the `first` given (an audit entry, an outbox event). */
export interface WithItem {
  cte: (first: number) => string;
  values: unknown[];
}

/**
 * Starts a session, in one statement: the user's sign-in is recorded (failed attempts reset, last login, active
 * account), the session and its first refresh token are inserted, and the access token's role claims (`claims`,
 * numbered from $10) are read. `extra.guard` (see SessionGuard), `extra.audit` (the request's audit entry) and
 * `extra.event` (the sign-in's outbox event) are WITH items of the same statement, numbered after the claims.
 */
export async function startSession(
  q: Queryable,
  s: { id: string; tenantId: string; userId: string; amr: string[]; ip?: string; userAgent?: string; expiresAt: Date; tokenHash: string; lastLogin: Date },
  claims: ClaimsSql,
  extra: { guard?: SessionGuard; audit?: WithItem; event?: WithItem } = {},
): Promise<RoleClaims> {
  const { guard, audit, event } = extra;
  const guardAt = 10 + claims.params.length;
  const auditAt = guardAt + (guard?.values.length ?? 0);
  const eventAt = auditAt + (audit?.values.length ?? 0);
  const sql = compose(`start:${claims.cte}:${guard ? `${guard.key}@${guardAt}` : '-'}:${audit ? auditAt : '-'}:${event ? eventAt : '-'}`, () =>
    `WITH signed_in AS (UPDATE users SET failed_attempts = 0, last_login = $9, active_tenant_id = $2, updated_at = now() WHERE id = $3),
          session AS (INSERT INTO sessions (id, tenant_id, user_id, amr, ip, user_agent, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id),
          token AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT $8, id FROM session),${guard ? `
          ${guard.ctes(guardAt)},` : ''}${audit ? `
          ${audit.cte(auditAt)},` : ''}${event ? `
          ${event.cte(eventAt)},` : ''}
          ${claims.cte}
     SELECT ${claims.select}${guard ? `, ${guard.check} AS guard` : ''}`);
  const { rows } = await q.query<RoleClaims>(sql, [s.id, s.tenantId, s.userId, s.amr, s.ip ?? null, s.userAgent?.slice(0, 512) ?? null, s.expiresAt, s.tokenHash, s.lastLogin, ...claims.params, ...(guard?.values ?? []), ...(audit?.values ?? []), ...(event?.values ?? [])]);
  return rows[0];
}

/** Role claims alone (`claims` numbered from $1), for tokens issued outside sign-in and refresh. */
export async function roleClaims(q: Queryable, claims: ClaimsSql): Promise<RoleClaims> {
  const sql = compose(`claims:${claims.cte}`, () => `WITH ${claims.cte} SELECT ${claims.select}`);
  const { rows } = await q.query<RoleClaims>(sql, claims.params);
  return rows[0];
}

/** The `dispatched_at` of a session.revoked event written from a `revoked` row (events module, dispatchedAtSql). */
const SESSION_REVOKED_DISPATCHED = dispatchedAtSql(`'session.revoked'`, 'revoked.tenant_id');

/** With a concurrent-session limit: revokes the user's live sessions past the newest `keep`, in one statement. */
export async function revokeBeyond(q: Queryable, userId: string, keep: number, reason: string): Promise<number> {
  const r = await q.query<{ n: number }>(
    `WITH victims AS (SELECT id FROM sessions WHERE user_id = $2 AND revoked_at IS NULL AND expires_at > now() ORDER BY created_at DESC, id OFFSET $3),
          revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = $1 WHERE id IN (SELECT id FROM victims) AND revoked_at IS NULL RETURNING id, user_id, tenant_id),
          emitted AS (INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data, dispatched_at)
            SELECT gen_random_uuid(), 'session.revoked', tenant_id, 'session', id::text,
                   jsonb_build_object('sessionId', id, 'userId', user_id, 'tenantId', tenant_id, 'reason', $1::text),
                   ${SESSION_REVOKED_DISPATCHED} FROM revoked)
     SELECT count(*)::int AS n FROM revoked`,
    [reason, userId, keep],
  );
  const n = Number(r.rows[0]?.n ?? 0);
  if (n > 0) revocations.bump();
  return n;
}

export async function revoke(q: Queryable, where: { sessionId?: string; sessionIds?: string[]; userId?: string; exceptSessionId?: string; tenantId?: string }, reason: string): Promise<number> {
  const conds = ['revoked_at IS NULL'];
  const params: unknown[] = [reason];
  if (where.sessionId) conds.push(`id = $${params.push(where.sessionId)}`);
  if (where.sessionIds) conds.push(`id = ANY($${params.push(where.sessionIds)}::uuid[])`);
  if (where.userId) conds.push(`user_id = $${params.push(where.userId)}`);
  if (where.exceptSessionId) conds.push(`id <> $${params.push(where.exceptSessionId)}`);
  if (where.tenantId) conds.push(`tenant_id = $${params.push(where.tenantId)}`);
  // Each revoked session emits session.revoked into the outbox in the same statement, so in the same transaction.
  const r = await q.query<{ n: number }>(
    `WITH revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = $1 WHERE ${conds.join(' AND ')} RETURNING id, user_id, tenant_id),
          emitted AS (INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data, dispatched_at)
            SELECT gen_random_uuid(), 'session.revoked', tenant_id, 'session', id::text,
                   jsonb_build_object('sessionId', id, 'userId', user_id, 'tenantId', tenant_id, 'reason', $1::text),
                   ${SESSION_REVOKED_DISPATCHED} FROM revoked)
     SELECT count(*)::int AS n FROM revoked`,
    params,
  );
  const n = Number(r.rows[0]?.n ?? 0);
  // Access tokens of the revoked sessions stop at once on this instance (auth/liveness.ts).
  if (n > 0) revocations.bump();
  return n;
}

export async function activeSessions(q: Queryable, userId: string): Promise<SessionRow[]> {
  const { rows } = await q.query<SessionRow>(
    'SELECT * FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY created_at DESC, id',
    [userId],
  );
  return rows;
}

export async function findSession(q: Queryable, id: string): Promise<SessionRow | undefined> {
  const { rows } = await q.query<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id]);
  return rows[0];
}

export async function policy(q: Queryable, scope: string): Promise<SessionPolicyRow | undefined> {
  const { rows } = await q.query<SessionPolicyRow>('SELECT * FROM session_policies WHERE scope = $1', [scope]);
  return rows[0];
}

/** The policy rows of several scopes (an account's and the environment's '') in one statement. */
export async function policies(q: Queryable, scopes: string[]): Promise<SessionPolicyRow[]> {
  const { rows } = await q.query<SessionPolicyRow>('SELECT * FROM session_policies WHERE scope = ANY($1::text[])', [scopes]);
  return rows;
}

export async function savePolicy(q: Queryable, p: Omit<SessionPolicyRow, 'updated_at'>): Promise<void> {
  await q.query(
    `INSERT INTO session_policies (scope, idle_timeout_seconds, absolute_timeout_seconds, max_concurrent) VALUES ($1, $2, $3, $4)
     ON CONFLICT (scope) DO UPDATE SET idle_timeout_seconds = $2, absolute_timeout_seconds = $3, max_concurrent = $4, updated_at = now()`,
    [p.scope, p.idle_timeout_seconds, p.absolute_timeout_seconds, p.max_concurrent],
  );
}

export async function deletePolicy(q: Queryable, scope: string): Promise<void> {
  await q.query('DELETE FROM session_policies WHERE scope = $1', [scope]);
}

/** A one-time password-reset token (its SHA-256); redeemed by the password-reset route. */
export async function insertResetToken(q: Queryable, t: { userId: string; tokenHash: string; reason: string; ttlSeconds: number }): Promise<void> {
  await q.query(
    `INSERT INTO password_reset_tokens (token_hash, user_id, reason, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [t.tokenHash, t.userId, t.reason, t.ttlSeconds],
  );
}

/**
 * Replaces a password hash by a rehash of the same password (an imported format replaced by argon2id at sign-in), in
 * one statement. The user is named in the transaction-local setting gatehouse.password_rehash first, so the trigger of
 * migration 0031 keeps password_changed_at: the password itself did not change (its expiry clock runs on).
 */
export async function rehashPassword(q: Queryable, userId: string, hash: string): Promise<void> {
  await q.query(
    `WITH marked AS (SELECT set_config('gatehouse.password_rehash', $1::text, true) AS v)
     UPDATE users SET password_hash = $2, updated_at = now() FROM marked WHERE id = $1::uuid AND marked.v IS NOT NULL`,
    [userId, hash],
  );
}

/** Slots of sign_in_decoys (migration 0040). */
const DECOY_SLOTS = 64;
const DECOY_FAILURE = prepared(
  `UPDATE sign_in_decoys SET failed_attempts = failed_attempts + 1, data = $2::jsonb,
          updated_at = coalesce(${dispatchedAtSql('$3::text', 'NULL::text')}, now())
    WHERE slot = $1`,
);

/**
 * The committed write of an unknown identifier's failed sign-in (login.service.ts), in place of the known user's
 * sign-in-failed event: one row of sign_in_decoys, with the data and the subscriber check the event's INSERT has.
 */
export async function countUnknownFailure(q: Queryable, data: Record<string, unknown>): Promise<void> {
  await q.query(DECOY_FAILURE, [Math.floor(Math.random() * DECOY_SLOTS), JSON.stringify(data), 'user.sign_in_failed']);
}
