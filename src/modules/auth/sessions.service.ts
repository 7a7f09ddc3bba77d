import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import * as store from './store.ts';

/**
 * How long a session-policy change made by another instance may take to reach this one's sign-ins (this instance's
 * own changes apply at once). Refresh does not use the cache: it reads the idle timeout in its session lookup.
 */
export const SESSION_POLICY_CACHE_MS = 2000;
/** Invalidation topic of the session policies (src/storage/invalidation.ts). */
export const SESSION_POLICY_TOPIC = 'auth.session-policy';

export interface SessionPolicyInput {
  sessionIdleTimeoutConfiguration?: { isActive: boolean; timeout: number };
  sessionTimeoutConfiguration?: { isActive: boolean; timeout: number };
  sessionConcurrentConfiguration?: { isActive: boolean; maxSessions: number };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

/** A session as the self-service routes answer it; `current` marks the caller's own. */
function sessionView(s: store.SessionRow, currentSessionId?: string) {
  return {
    id: s.id,
    userAgent: s.user_agent,
    ipAddress: s.ip,
    tenantId: s.tenant_id,
    createdAt: iso(s.created_at)!,
    lastActiveAt: iso(s.last_used_at)!,
    expiresAt: iso(s.expires_at)!,
    current: s.id === currentSessionId,
  };
}
export type EffectiveSessionPolicy = Omit<store.SessionPolicyRow, 'scope' | 'updated_at'>;

/** Sessions of signed-in users and the session policy (idle timeout, absolute timeout, concurrent sessions). */
export function createSessionsService(deps: {
  db: Db;
  environment: EnvironmentService;
  tenants: TenantsService;
  invalidation?: Invalidation;
}) {
  const { db } = deps;
  const policyCache = createReadCache<EffectiveSessionPolicy>({ ttlMs: SESSION_POLICY_CACHE_MS });
  // Key: the account; none for the environment's policy, the fallback of every account.
  deps.invalidation?.subscribe(SESSION_POLICY_TOPIC, (tenantId) => policyCache.invalidate(tenantId));

  /** The policy in force for an account: its own row, else the environment's, else none (one statement). */
  async function effective(q: Queryable, tenantId?: string): Promise<EffectiveSessionPolicy> {
    const rows = await store.policies(q, tenantId ? [tenantId, ''] : ['']);
    const row = (tenantId ? rows.find((r) => r.scope === tenantId) : undefined) ?? rows.find((r) => r.scope === '');
    return {
      idle_timeout_seconds: row?.idle_timeout_seconds ?? null,
      absolute_timeout_seconds: row?.absolute_timeout_seconds ?? null,
      max_concurrent: row?.max_concurrent ?? null,
    };
  }

  const toWire = (p: EffectiveSessionPolicy) => ({
    sessionIdleTimeoutConfiguration: {
      isActive: p.idle_timeout_seconds !== null,
      timeout: p.idle_timeout_seconds ?? 0,
    },
    sessionTimeoutConfiguration: {
      isActive: p.absolute_timeout_seconds !== null,
      timeout: p.absolute_timeout_seconds ?? 0,
    },
    sessionConcurrentConfiguration: { isActive: p.max_concurrent !== null, maxSessions: p.max_concurrent ?? 0 },
  });

  return {
    /**
     * The session policy in force for an account, for sign-in (cached, see SESSION_POLICY_CACHE_MS); a caller that
     * needs it twice reads it once and passes it on.
     */
    policyFor: (q: Queryable, tenantId: string): Promise<EffectiveSessionPolicy> =>
      policyCache.get(tenantId, () => effective(q, tenantId)),

    /**
     * When a new session ends for good: the absolute timeout, capped by the refresh-token lifetime. `known` carries
     * the policy and the refresh-token lifetime when the caller has already read them in this transaction.
     */
    async newSessionExpiry(
      q: Queryable,
      tenantId: string,
      known: { policy?: EffectiveSessionPolicy; refreshLifetime?: number } = {},
    ): Promise<Date> {
      const p = known.policy ?? (await effective(q, tenantId));
      const refreshLifetime =
        known.refreshLifetime ?? (await deps.environment.settings(q)).defaultRefreshTokenExpiration;
      const seconds = Math.min(p.absolute_timeout_seconds ?? refreshLifetime, refreshLifetime);
      return new Date(Date.now() + seconds * 1000);
    },

    /** With a concurrent-session limit, the oldest live sessions are revoked to make room for a new one. */
    async makeRoomFor(q: Queryable, userId: string, tenantId: string, policy?: EffectiveSessionPolicy): Promise<void> {
      const p = policy ?? (await effective(q, tenantId));
      if (p.max_concurrent === null) return;
      // The live sessions past the newest (max - 1) are revoked, in one statement.
      await store.revokeBeyond(q, userId, Math.max(p.max_concurrent - 1, 0), 'concurrent session limit');
    },

    /**
     * Why a session is over ('expired', 'idle timeout'), or undefined while it lives. `idleTimeoutSeconds`, when the
     * caller read it with the session (refresh), saves reading the policy.
     */
    async isExpired(
      q: Queryable,
      s: store.SessionRow,
      known?: { idleTimeoutSeconds: number | null },
    ): Promise<string | undefined> {
      const now = Date.now();
      if (s.expires_at.getTime() <= now) return 'expired';
      const idle = known ? known.idleTimeoutSeconds : (await effective(q, s.tenant_id)).idle_timeout_seconds;
      if (idle !== null && s.last_used_at.getTime() + idle * 1000 <= now) return 'idle timeout';
      return undefined;
    },

    async list(userId: string, currentSessionId?: string) {
      const rows = await store.activeSessions(db, userId);
      return rows.map((s) => sessionView(s, currentSessionId));
    },

    /** The session the caller's token belongs to, while it is live. */
    async current(userId: string, sessionId: string | undefined) {
      const s = sessionId && isUuid(sessionId) ? await store.findSession(db, sessionId) : undefined;
      if (!s || s.user_id !== userId || s.revoked_at || new Date(s.expires_at).getTime() <= Date.now())
        throw new AppError('SESSION_NOT_FOUND', 'The token belongs to no live session');
      return sessionView(s, sessionId);
    },

    /** Revokes those of `sessionIds` that are the user's live sessions (others' ids are not told apart from unknown ones). */
    async revokeMany(userId: string, sessionIds: string[]): Promise<{ revoked: number }> {
      return { revoked: await store.revoke(db, { userId, sessionIds }, 'revoked by user') };
    },

    async revokeMine(userId: string, sessionId: string): Promise<void> {
      const s = isUuid(sessionId) ? await store.findSession(db, sessionId) : undefined;
      if (!s || s.user_id !== userId || s.revoked_at)
        throw new AppError('SESSION_NOT_FOUND', `No active session ${sessionId} of yours`);
      await store.revoke(db, { sessionId }, 'revoked by user');
    },

    /** Revokes every session of the user except `keep` (the caller's own, for self-service). */
    async revokeAll(userId: string, keep?: string): Promise<{ revoked: number }> {
      return {
        revoked: await store.revoke(
          db,
          { userId, exceptSessionId: keep },
          keep ? 'revoked by user' : 'revoked by administrator',
        ),
      };
    },

    /** Ends a user's sessions but `keep`, inside the caller's transaction (a password change). */
    endOtherSessions: (q: Queryable, userId: string, keep: string | undefined): Promise<number> =>
      store.revoke(q, { userId, exceptSessionId: keep }, 'password changed'),

    /** Ends a user's sessions in one account, inside the caller's transaction (SCIM deprovisioning). */
    endAccountSessions: (q: Queryable, userId: string, tenantId: string, reason: string): Promise<number> =>
      store.revoke(q, { userId, tenantId }, reason),

    /** Ends every session of a user inside the caller's transaction (a temporary password was dropped: proof of mailbox). */
    endUserSessions: (q: Queryable, userId: string, reason: string): Promise<number> =>
      store.revoke(q, { userId }, reason),

    /** Drops an account's own session policy (account removal), so a reactivated id starts afresh. */
    async forgetAccount(q: Queryable, tenantId: string): Promise<void> {
      await store.deletePolicy(q, tenantId);
      policyCache.invalidate(tenantId);
    },

    async getPolicy(tenantId?: string) {
      if (tenantId) await deps.tenants.requireLive(db, tenantId);
      return toWire(await effective(db, tenantId));
    },

    async setPolicy(tenantId: string | undefined, body: SessionPolicyInput) {
      if (tenantId) await deps.tenants.requireLive(db, tenantId);
      const current = await effective(db, tenantId);
      const pick = (
        c: { isActive: boolean; timeout?: number; maxSessions?: number } | undefined,
        prev: number | null,
      ) => (c === undefined ? prev : c.isActive ? (c.timeout ?? c.maxSessions ?? null) : null);
      try {
        await store.savePolicy(db, {
          scope: tenantId ?? '',
          idle_timeout_seconds: pick(body.sessionIdleTimeoutConfiguration, current.idle_timeout_seconds),
          absolute_timeout_seconds: pick(body.sessionTimeoutConfiguration, current.absolute_timeout_seconds),
          max_concurrent: pick(body.sessionConcurrentConfiguration, current.max_concurrent),
        });
      } finally {
        // The environment's policy ('') is the fallback of every account: all entries go.
        policyCache.invalidate(tenantId || undefined);
      }
      await deps.invalidation?.publish(db, SESSION_POLICY_TOPIC, tenantId || undefined);
      return toWire(await effective(db, tenantId));
    },
  };
}
