import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { membershipsWithStateSql, type MembershipRow, type UserRow } from '../users/index.ts';
import type { ClaimsSql, RoleClaims } from './tokens.ts';

export interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  amr: string[];
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
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

const SESSION_COLUMNS = ['id', 'tenant_id', 'user_id', 'amr', 'ip', 'user_agent', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'revoke_reason'] as const;
const MEMBERSHIP_COLUMNS = ['tenant_id', 'is_disabled', 'temporary_expiration_date', 'sub_account_access_allowed', 'created_at', 'sub_account_access_type', 'live', 'role_ids'] as const;

/**
 * What a refresh needs, in one statement: the session behind a refresh token, locked, with whether that token was
 * already rotated and the idle timeout in force for its account (the account's session policy row, else the
 * environment's); the session's user (undefined when gone); and the user's memberships as `membershipsWithState`
 * reads them. The token's row is locked too, so a refresh that waited for a concurrent one with the same token sees
 * that token rotated (a replay) rather than its state before the wait. One row per membership (at least one), session and user columns repeated; session and membership
 * columns carry the prefixes `_s_` and `_m_` (no column of users starts with an underscore).
 */
const REFRESH_VIEW = prepared(
  `SELECT ${SESSION_COLUMNS.map((c) => `s.${c} AS _s_${c}`).join(', ')}, rt.rotated_at AS _s_rotated_at,
          (SELECT p.idle_timeout_seconds FROM session_policies p WHERE p.scope IN (s.tenant_id, '') ORDER BY p.scope = '' LIMIT 1) AS _s_idle_timeout_seconds,
          ${MEMBERSHIP_COLUMNS.map((c) => `m.${c} AS _m_${c}`).join(', ')},
          u.*
     FROM refresh_tokens rt
     JOIN sessions s ON s.id = rt.session_id
     LEFT JOIN users u ON u.id = s.user_id
     LEFT JOIN LATERAL (${membershipsWithStateSql('s.user_id')}) m ON true
    WHERE rt.token_hash = $1
    ORDER BY m.created_at, m.tenant_id
      FOR UPDATE OF s, rt`,
);

export interface RefreshView {
  session: SessionRow & { rotated_at: Date | null };
  idleTimeoutSeconds: number | null;
  user: UserRow | undefined;
  memberships: (MembershipRow & { live: boolean })[];
}

export async function refreshView(q: Queryable, tokenHash: string): Promise<RefreshView | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(REFRESH_VIEW, [tokenHash]);
  if (rows.length === 0) return undefined;
  const first = rows[0];
  const session = {} as Record<string, unknown>;
  const user = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(first)) {
    if (k.startsWith('_s_')) session[k.slice(3)] = v;
    else if (!k.startsWith('_m_')) user[k] = v;
  }
  const idleTimeoutSeconds = session.idle_timeout_seconds as number | null;
  delete session.idle_timeout_seconds;
  const memberships = rows.filter((r) => r._m_tenant_id !== null).map((r) => {
    const m = {} as Record<string, unknown>;
    for (const c of MEMBERSHIP_COLUMNS) m[c] = r[`_m_${c}`];
    return m as unknown as MembershipRow & { live: boolean };
  });
  return {
    session: session as unknown as SessionRow & { rotated_at: Date | null },
    idleTimeoutSeconds,
    user: user.id === null || user.id === undefined ? undefined : (user as unknown as UserRow),
    memberships,
  };
}

/**
 * `rotate`, and the new access token's role claims (`claims`, numbered from $5), in one statement; `audit`, when
 * given, is the request's audit entry (a WITH item, numbered after the claims), stored by the same statement.
 */
export async function rotateWithClaims(
  q: Queryable,
  r: { sessionId: string; oldHash: string; newHash: string; tenantId: string },
  claims: ClaimsSql,
  audit?: { cte: (first: number) => string; values: unknown[] },
): Promise<RoleClaims> {
  const auditAt = 5 + claims.params.length;
  const sql = compose(`rotate:${claims.cte}:${audit ? auditAt : '-'}`, () =>
    `WITH rotated AS (UPDATE refresh_tokens SET rotated_at = now() WHERE token_hash = $2),
          issued AS (INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($3, $1)),
          touched AS (UPDATE sessions SET last_used_at = now(), tenant_id = $4 WHERE id = $1),${audit ? `
          ${audit.cte(auditAt)},` : ''}
          ${claims.cte}
     SELECT ${claims.select}`);
  const { rows } = await q.query<RoleClaims>(sql, [r.sessionId, r.oldHash, r.newHash, r.tenantId, ...claims.params, ...(audit?.values ?? [])]);
  return rows[0];
}

/**
 * Starts a session, in one statement: the user's sign-in is recorded (failed attempts reset, last login, active
 * account), the session and its first refresh token are inserted, and the access token's role claims (`claims`,
 * numbered from $10) are read.
 */
export async function startSession(
  q: Queryable,
  s: { id: string; tenantId: string; userId: string; amr: string[]; ip?: string; userAgent?: string; expiresAt: Date; tokenHash: string; lastLogin: Date },
  claims: ClaimsSql,
): Promise<RoleClaims> {
  const sql = compose(`start:${claims.cte}`, () =>
    `WITH signed_in AS (UPDATE users SET failed_attempts = 0, last_login = $9, active_tenant_id = $2, updated_at = now() WHERE id = $3),
          session AS (INSERT INTO sessions (id, tenant_id, user_id, amr, ip, user_agent, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id),
          token AS (INSERT INTO refresh_tokens (token_hash, session_id) SELECT $8, id FROM session),
          ${claims.cte}
     SELECT ${claims.select}`);
  const { rows } = await q.query<RoleClaims>(sql, [s.id, s.tenantId, s.userId, s.amr, s.ip ?? null, s.userAgent?.slice(0, 512) ?? null, s.expiresAt, s.tokenHash, s.lastLogin, ...claims.params]);
  return rows[0];
}

/** Role claims alone (`claims` numbered from $1), for tokens issued outside sign-in and refresh. */
export async function roleClaims(q: Queryable, claims: ClaimsSql): Promise<RoleClaims> {
  const sql = compose(`claims:${claims.cte}`, () => `WITH ${claims.cte} SELECT ${claims.select}`);
  const { rows } = await q.query<RoleClaims>(sql, claims.params);
  return rows[0];
}

/** With a concurrent-session limit: revokes the user's live sessions past the newest `keep`, in one statement. */
export async function revokeBeyond(q: Queryable, userId: string, keep: number, reason: string): Promise<number> {
  const r = await q.query<{ n: number }>(
    `WITH victims AS (SELECT id FROM sessions WHERE user_id = $2 AND revoked_at IS NULL AND expires_at > now() ORDER BY created_at DESC, id OFFSET $3),
          revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = $1 WHERE id IN (SELECT id FROM victims) AND revoked_at IS NULL RETURNING id, user_id, tenant_id),
          emitted AS (INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data)
            SELECT gen_random_uuid(), 'session.revoked', tenant_id, 'session', id::text,
                   jsonb_build_object('sessionId', id, 'userId', user_id, 'tenantId', tenant_id, 'reason', $1::text) FROM revoked)
     SELECT count(*)::int AS n FROM revoked`,
    [reason, userId, keep],
  );
  return Number(r.rows[0]?.n ?? 0);
}

export async function revoke(q: Queryable, where: { sessionId?: string; userId?: string; exceptSessionId?: string; tenantId?: string }, reason: string): Promise<number> {
  const conds = ['revoked_at IS NULL'];
  const params: unknown[] = [reason];
  if (where.sessionId) conds.push(`id = $${params.push(where.sessionId)}`);
  if (where.userId) conds.push(`user_id = $${params.push(where.userId)}`);
  if (where.exceptSessionId) conds.push(`id <> $${params.push(where.exceptSessionId)}`);
  if (where.tenantId) conds.push(`tenant_id = $${params.push(where.tenantId)}`);
  // Each revoked session emits session.revoked into the outbox (issue 10) in the same statement, so in the same transaction.
  const r = await q.query<{ n: number }>(
    `WITH revoked AS (UPDATE sessions SET revoked_at = now(), revoke_reason = $1 WHERE ${conds.join(' AND ')} RETURNING id, user_id, tenant_id),
          emitted AS (INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data)
            SELECT gen_random_uuid(), 'session.revoked', tenant_id, 'session', id::text,
                   jsonb_build_object('sessionId', id, 'userId', user_id, 'tenantId', tenant_id, 'reason', $1::text) FROM revoked)
     SELECT count(*)::int AS n FROM revoked`,
    params,
  );
  return Number(r.rows[0]?.n ?? 0);
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
