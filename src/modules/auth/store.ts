import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { dispatchedAtSql, eventsFromRowsItem } from '../events/index.ts';
import { revocations } from '../../lib/revocations.ts';
import { sql, type Param, type Sql } from '../../storage/sql.ts';
import { recordSignInItem, resetFailedAttemptsItem } from '../users/index.ts';
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
export async function insertSession(
  q: Queryable,
  s: {
    id: string;
    tenantId: string;
    userId: string;
    amr: string[];
    ip?: string;
    userAgent?: string;
    expiresAt: Date;
    tokenHash: string;
  },
) {
  await q.query(
    `WITH session AS (
       INSERT INTO sessions (id, tenant_id, user_id, amr, ip, user_agent, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
     INSERT INTO refresh_tokens (token_hash, session_id) SELECT $8, id FROM session`,
    [s.id, s.tenantId, s.userId, s.amr, s.ip ?? null, s.userAgent?.slice(0, 512) ?? null, s.expiresAt, s.tokenHash],
  );
}

/** The session behind a refresh token, locked, with whether that token was already rotated. */
export async function sessionByRefresh(
  q: Queryable,
  tokenHash: string,
): Promise<(SessionRow & { rotated_at: Date | null }) | undefined> {
  const { rows } = await q.query<SessionRow & { rotated_at: Date | null }>(
    `SELECT s.*, rt.rotated_at FROM refresh_tokens rt JOIN sessions s ON s.id = rt.session_id WHERE rt.token_hash = $1 FOR UPDATE OF s`,
    [tokenHash],
  );
  return rows[0];
}

/** Marks the old refresh token rotated, adds the new one and touches the session, in one statement. */
export async function rotate(
  q: Queryable,
  sessionId: string,
  oldHash: string,
  newHash: string,
  tenantId: string,
): Promise<void> {
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

const EMPTY = sql.raw('');

/** Runs a composed statement (storage/sql.ts); its text is constant per shape, so it is marked for preparing. */
async function run<T>(q: Queryable, statement: Sql): Promise<T> {
  const { text, values } = statement.build();
  const { rows } = await q.query<T>(prepared(text), values);
  return rows[0];
}

/**
 * The rotation of a refresh: the token `oldHash` marked rotated on the condition that it is still unrotated and its
 * session not revoked, the new token `newHash` added, the session touched, and the new access token's role claims
 * read (`claims`), in one statement that needs no transaction of its own. `audit`, when given, is the request's
 * audit entry, stored only when the token rotates. Answers undefined when the token did not rotate (another request
 * used it first, or the session was revoked meanwhile): nothing was written then. Two concurrent uses of one token
 * cannot both rotate it: the second UPDATE waits for the first's row lock and, once that commits, re-checks
 * `rotated_at IS NULL` on the new row version (READ COMMITTED).
 */
export async function rotateWithClaims(
  q: Queryable,
  r: { sessionId: string; oldHash: string; newHash: string },
  claims: ClaimsSql,
  audit?: { item: (onlyIf?: string) => Sql },
): Promise<RoleClaims | undefined> {
  const id = sql.param(r.sessionId);
  const { rotated, ...roleClaims } = await run<RoleClaims & { rotated: boolean }>(
    q,
    sql`WITH rotated AS (
            UPDATE refresh_tokens SET rotated_at = now()
             WHERE token_hash = ${r.oldHash} AND rotated_at IS NULL AND session_id = ${id}
               AND EXISTS (SELECT 1 FROM sessions WHERE id = ${id} AND revoked_at IS NULL)
            RETURNING session_id),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT ${r.newHash}, session_id FROM rotated),
          touched AS (UPDATE sessions SET last_used_at = now() WHERE id IN (SELECT session_id FROM rotated)),${
            audit
              ? sql`
          ${audit.item('rotated')},`
              : EMPTY
          }
          ${claims.item}
     SELECT EXISTS (SELECT 1 FROM rotated) AS rotated, ${claims.select}`,
  );
  return rotated ? roleClaims : undefined;
}

/**
 * An access token re-issued for a live session (no refresh token rotated): the session touched on the condition that
 * it is not revoked, and the token's role claims read (`claims`), in one statement. Answers undefined when the
 * session was revoked meanwhile (nothing written then).
 */
export async function touchWithClaims(
  q: Queryable,
  sessionId: string,
  claims: ClaimsSql,
): Promise<RoleClaims | undefined> {
  const { touched, ...roleClaims } = await run<RoleClaims & { touched: boolean }>(
    q,
    sql`WITH touched AS (
            UPDATE sessions SET last_used_at = now() WHERE id = ${sessionId} AND revoked_at IS NULL RETURNING id),
          ${claims.item}
     SELECT EXISTS (SELECT 1 FROM touched) AS touched, ${claims.select}`,
  );
  return touched ? roleClaims : undefined;
}

/**
 * A step-up (re-authentication) of a live session, in one statement: the session's `auth_time` set to now and the
 * session touched on the condition that it is not revoked, its unrotated refresh tokens marked rotated and `newHash`
 * added (as a refresh rotates), the user's failed attempts reset (as a sign-in does), and the token's role claims
 * read (`claims`). Answers undefined when the session was revoked meanwhile (nothing written then).
 */
export async function stepUpWithClaims(
  q: Queryable,
  r: { sessionId: string; userId: string; newHash: string; amr: string[] },
  claims: ClaimsSql,
): Promise<(RoleClaims & { authTime: Date }) | undefined> {
  const { auth_time, ...roleClaims } = await run<RoleClaims & { auth_time: Date | null }>(
    q,
    sql`WITH stepped AS (
            UPDATE sessions SET auth_time = now(), last_used_at = now(), amr = ${r.amr}::text[]
             WHERE id = ${r.sessionId} AND revoked_at IS NULL
            RETURNING id, auth_time),
          rotated AS (UPDATE refresh_tokens SET rotated_at = now() WHERE session_id IN (SELECT id FROM stepped) AND rotated_at IS NULL),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT ${r.newHash}, id FROM stepped),
          ${resetFailedAttemptsItem({ userId: r.userId, onlyIf: 'stepped' })},
          ${claims.item}
     SELECT (SELECT auth_time FROM stepped) AS auth_time, ${claims.select}`,
  );
  return auth_time ? { ...roleClaims, authTime: new Date(auth_time) } : undefined;
}

/**
 * A flow's own writes made by the statement that starts a sign-in (e.g. the MFA verify's TOTP step and mfaToken
 * spent): WITH items `items`. `check` is a select expression that raises an error when those writes did not happen
 * (e.g. a cast of a marker text to boolean), so the whole statement, session included, is undone, with or without a
 * transaction around it.
 */
export interface SessionGuard {
  items: Sql;
  check: string;
}

/** The session and its first refresh token, as WITH items `session` and `token` (auth's part of the start). */
const sessionItems = (s: {
  id: string;
  tenantId: Param;
  userId: Param;
  amr: string[];
  ip?: string;
  userAgent?: string;
  expiresAt: Date;
  tokenHash: string;
}) =>
  sql`session AS (INSERT INTO sessions (id, tenant_id, user_id, amr, ip, user_agent, expires_at)
                  VALUES (${s.id}, ${s.tenantId}, ${s.userId}, ${s.amr}, ${s.ip ?? null}, ${s.userAgent?.slice(0, 512) ?? null},
                          ${s.expiresAt})
                  RETURNING id),
          token AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT ${s.tokenHash}, id FROM session)`;

/**
 * Starts a session, in one statement composed of the owning modules' WITH items: the user's sign-in recorded (users:
 * failed attempts reset, last login, active account), the session and its first refresh token inserted (auth),
 * `extra.guard` (the flow's own writes, see SessionGuard), `extra.audit` (audit: the request's entry), `extra.event`
 * (events: the sign-in's outbox event), and the access token's role claims read (`claims`).
 */
export async function startSession(
  q: Queryable,
  s: {
    id: string;
    tenantId: string;
    userId: string;
    amr: string[];
    ip?: string;
    userAgent?: string;
    expiresAt: Date;
    tokenHash: string;
    lastLogin: Date;
  },
  claims: ClaimsSql,
  extra: { guard?: SessionGuard; audit?: { item: (onlyIf?: string) => Sql }; event?: { item: Sql } } = {},
): Promise<RoleClaims> {
  const { guard, audit, event } = extra;
  const userId = sql.param(s.userId);
  const tenantId = sql.param(s.tenantId);
  const items = [
    recordSignInItem({ userId, tenantId, at: s.lastLogin }),
    sessionItems({ ...s, userId, tenantId }),
    ...(guard ? [guard.items] : []),
    ...(audit ? [audit.item()] : []),
    ...(event ? [event.item] : []),
    claims.item,
  ];
  return run<RoleClaims>(
    q,
    sql`WITH ${sql.join(items, ',\n          ')}
     SELECT ${claims.select}${guard ? sql`, ${sql.raw(guard.check)} AS guard` : EMPTY}`,
  );
}

/** Role claims alone, for tokens issued outside sign-in and refresh. */
export async function roleClaims(q: Queryable, claims: ClaimsSql): Promise<RoleClaims> {
  return run<RoleClaims>(q, sql`WITH ${claims.item} SELECT ${claims.select}`);
}

/**
 * The WITH items that revoke the sessions `victims` (a condition over sessions' columns) with `reason`: `revoked`
 * (id, user_id, tenant_id of each), and `emitted`, a session.revoked event per revoked session in the outbox (events),
 * so in the same transaction.
 */
function revokeItems(victims: Sql, reason: string): Sql {
  const why = sql.param(reason);
  return sql`revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = ${why}
                  WHERE ${victims} AND revoked_at IS NULL RETURNING id, user_id, tenant_id),
          ${eventsFromRowsItem({
            name: 'emitted',
            from: 'revoked',
            eventKey: 'session.revoked',
            entityType: 'session',
            tenant: 'revoked.tenant_id',
            entityId: 'id::text',
            data: sql`jsonb_build_object('sessionId', id, 'userId', user_id, 'tenantId', tenant_id,
                                         'reason', ${why}::text)`,
          })}`;
}

/** Runs a revocation (revokeItems) and answers how many sessions it revoked. */
async function revokeWith(q: Queryable, items: Sql): Promise<number> {
  const { text, values } = sql`WITH ${items}
     SELECT count(*)::int AS n FROM revoked`.build();
  const r = await q.query<{ n: number }>(text, values);
  const n = Number(r.rows[0]?.n ?? 0);
  // Access tokens of the revoked sessions stop at once on this instance (auth/liveness.ts).
  if (n > 0) revocations.bump();
  return n;
}

/** With a concurrent-session limit: revokes the user's live sessions past the newest `keep`, in one statement. */
export async function revokeBeyond(q: Queryable, userId: string, keep: number, reason: string): Promise<number> {
  return revokeWith(
    q,
    sql`victims AS (SELECT id FROM sessions WHERE user_id = ${userId} AND revoked_at IS NULL AND expires_at > now()
                      ORDER BY created_at DESC, id OFFSET ${keep}),
          ${revokeItems(sql`id IN (SELECT id FROM victims)`, reason)}`,
  );
}

export async function revoke(
  q: Queryable,
  where: { sessionId?: string; sessionIds?: string[]; userId?: string; exceptSessionId?: string; tenantId?: string },
  reason: string,
): Promise<number> {
  const conds: Sql[] = [];
  if (where.sessionId) conds.push(sql`id = ${where.sessionId}`);
  if (where.sessionIds) conds.push(sql`id = ANY(${where.sessionIds}::uuid[])`);
  if (where.userId) conds.push(sql`user_id = ${where.userId}`);
  if (where.exceptSessionId) conds.push(sql`id <> ${where.exceptSessionId}`);
  if (where.tenantId) conds.push(sql`tenant_id = ${where.tenantId}`);
  return revokeWith(q, revokeItems(conds.length ? sql.join(conds, ' AND ') : sql`true`, reason));
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
  const { rows } = await q.query<SessionPolicyRow>('SELECT * FROM session_policies WHERE scope = ANY($1::text[])', [
    scopes,
  ]);
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
