import { isUuid } from '../../lib/pg-errors.ts';
import type { Queryable } from '../../storage/db.ts';

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

/**
 * What an access token says about roles: the keys of the roles (in the roles' list order: level, key) and the
 * distinct keys of the permissions they hold, sorted. One statement, for sign-in and refresh.
 */
export async function tokenRoleClaims(q: Queryable, roleIds: readonly string[]): Promise<{ roles: string[]; permissions: string[] }> {
  const ids = roleIds.filter((id) => isUuid(id));
  if (ids.length === 0) return { roles: [], permissions: [] };
  const { rows } = await q.query<{ roles: string[]; permissions: string[] }>(
    `SELECT ARRAY(SELECT r.key FROM roles r WHERE r.id = ANY($1::uuid[]) ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id) AS roles,
            ARRAY(SELECT DISTINCT p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
                  WHERE rp.role_id = ANY($1::uuid[]) ORDER BY p.key) AS permissions`,
    [ids],
  );
  return rows[0];
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
