import { isActingToken, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { revocations } from '../../lib/revocations.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { findById, isLockedNow, type UserRow, type UsersService } from '../users/index.ts';
import * as store from './store.ts';

/** How long this instance trusts a liveness answer; another instance's revocation reaches it within this time. */
export const LIVENESS_CACHE_MS = 5000;
/** Past this many entries the cache starts afresh (a bound on memory, not a tuning knob). */
const MAX_ENTRIES = 100_000;

/** Event keys whose emission ends or may end someone's access: this instance's cache is voided at once. */
const REVOKING_EVENTS = new Set([
  'user.deleted',
  'user.locked',
  'user.updated',
  'account.deleted',
  'account.moved',
  'scim.user_deprovisioned',
]);

/** Whether an act (impersonation or delegation, table token_acts) is live for the user in the account. */
export type ActCheck = (q: Queryable, actId: string, userId: string, tenantId: string) => Promise<boolean>;

/**
 * Whether a user token's session (`sid`) and its user's membership of the token's account are still live: the
 * session not revoked or expired (for impersonation and delegation tokens, the act row present and unexpired), the
 * user present and not locked, the account reachable by the user. Live answers (and ended sessions) are cached per
 * sid, account and user for LIVENESS_CACHE_MS, and dropped at once when this process revokes anything
 * (lib/revocations.ts): a cache hit runs no statement, a miss one (sessions) or three (acts).
 */
export function createLiveness(deps: { db: Db; users: UsersService; acts?: ActCheck }) {
  const { db, acts } = deps;
  const cache = new Map<string, { at: number; epoch: number; error?: AppError }>();

  async function membershipError(
    q: Queryable,
    userId: string,
    tenantId: string,
    memberships?: store.RefreshView['memberships'],
  ) {
    const access = await deps.users.accessView(q, userId, memberships);
    if (!(await access.accessTo(tenantId)))
      return new AppError('ACCESS_REVOKED', `The user of this token no longer has access to account ${tenantId}`);
    return undefined;
  }

  /** A locked user is told so (403, as sign-in and refresh do); a user that is gone has no live token (401). */
  function userError(user: UserRow | undefined): AppError | undefined {
    if (!user) return new AppError('ACCESS_REVOKED', 'The user of this token no longer exists');
    if (isLockedNow(user))
      return new AppError(
        'USER_LOCKED',
        'The user is locked; ask an administrator to unlock it or wait for the lock to expire',
      );
    return undefined;
  }

  async function lookup(auth: UserAuth, sid: string): Promise<AppError | undefined> {
    if (!isUuid(sid)) return new AppError('SESSION_REVOKED', 'The token belongs to no live session');
    if (isActingToken(auth)) {
      if (!acts || !(await acts(db, sid, auth.userId, auth.tenantId))) {
        return new AppError('SESSION_REVOKED', 'The impersonation or delegation of this token expired or was removed');
      }
      return userError(await findById(db, auth.userId)) ?? membershipError(db, auth.userId, auth.tenantId);
    }
    const view = await store.sessionView(db, sid);
    const s = view?.session;
    if (!view || !s || s.user_id !== auth.userId || s.revoked_at || s.expires_at.getTime() <= Date.now()) {
      return new AppError('SESSION_REVOKED', 'The session of this token was revoked or has ended: sign in again');
    }
    return userError(view.user) ?? membershipError(db, auth.userId, auth.tenantId, view.memberships);
  }

  return {
    /**
     * Throws (401) unless the token is live. Tokens without `sid` are not checked: every token Gatehouse issues to a
     * user carries one, so only a holder of the signing key makes such a token.
     */
    async check(auth: UserAuth): Promise<void> {
      const sid = auth.sessionId;
      if (!sid) return;
      const key = `${sid}|${auth.tenantId}|${auth.userId}`;
      const now = Date.now();
      const hit = cache.get(key);
      if (hit && hit.epoch === revocations.epoch && now - hit.at < LIVENESS_CACHE_MS) {
        if (hit.error) throw hit.error;
        return;
      }
      // The epoch as of before the read: a revocation during the read voids this entry at once.
      const epoch = revocations.epoch;
      const error = await lookup(auth, sid);
      // A lock or a membership may come back (unlock, re-add): only answers that cannot change are cached as refusals.
      if (!error || error.code === 'SESSION_REVOKED') {
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(key, { at: now, epoch, error });
      }
      if (error) throw error;
    },

    /** Whether an emitted event ends someone's access (then this process's revocation epoch moves). */
    observe(eventKey: string): void {
      if (REVOKING_EVENTS.has(eventKey)) revocations.bump();
    },
  };
}
export type Liveness = ReturnType<typeof createLiveness>;
