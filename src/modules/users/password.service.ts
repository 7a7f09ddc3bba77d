import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UsersCore } from './profile.service.ts';
import { isLockedNow } from './record.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';

/**
 * What a password change borrows from the sign-in (UsersDeps.passwordChecks): its rate limits, its failure count
 * (lockout policy, user.sign_in_failed / user.locked) and the end of the user's other sessions.
 */
export interface PasswordChangeChecks {
  /** Checks the sign-in limits for this address and identifier, in the caller's transaction; throws RATE_LIMITED. */
  limit(ip: string | undefined, identifier: string, q: Queryable): Promise<void>;
  /** A wrong current password, counted as a failed sign-in (may lock the user). Runs after the change's transaction. */
  failed(user: store.UserRow, attempt: { ip?: string; identifier: string }): Promise<void>;
  /** Revokes the user's sessions except `keep`, in the change's transaction (session.revoked for each). */
  endOtherSessions(q: Queryable, userId: string, keep: string | undefined): Promise<number>;
}

const identifierOf = (u: store.UserRow) => (u.email ?? u.username ?? u.id).toLowerCase();

/** Password change with the current password: a guess at it costs what a wrong sign-in costs. */
export function createPasswordChangeOps(deps: UsersDeps, core: UsersCore) {
  const { db, passwordChecks: checks } = deps;
  return {
    /**
     * Changes a password, the current one required; policy and history apply; user.password_changed in the same
     * transaction. The user's other sessions end (`keepSessionId`, the caller's own, stays). A wrong current password
     * counts towards the lockout policy and the sign-in rate limits, as a wrong password at sign-in does.
     */
    async changePassword(
      userId: string,
      current: string,
      next: string,
      client: { ip?: string; keepSessionId?: string } = {},
    ): Promise<void> {
      const wrong = await db.transaction(async (tx) => {
        const user = await core.requireUser(tx, userId, true);
        await checks?.limit(client.ip, identifierOf(user), tx);
        if (isLockedNow(user))
          throw new AppError(
            'USER_LOCKED',
            'The user is locked; ask an administrator to unlock it or wait for the lock to expire',
          );
        // A lock whose time has passed counts afresh, as at sign-in.
        if (!(await deps.passwords.verify(current, user.password_hash)).ok)
          return user.is_locked ? { ...user, failed_attempts: 0 } : user;
        await deps.passwords.validate(tx, next, {
          tenantId: user.active_tenant_id ?? undefined,
          userId,
          email: user.email ?? undefined,
        });
        const hash = await deps.passwords.hash(next);
        await store.updateUser(tx, userId, { password_hash: hash, must_reset_password: false, failed_attempts: 0 });
        await deps.passwords.remember(tx, userId, hash);
        await checks?.endOtherSessions(tx, userId, client.keepSessionId);
        await deps.events?.emit(tx, {
          eventKey: 'user.password_changed',
          tenantId: user.active_tenant_id,
          entity: { type: 'user', id: userId },
          data: { userId, tenantId: user.active_tenant_id },
        });
        return undefined;
      });
      if (wrong) {
        await checks?.failed(wrong, { ip: client.ip, identifier: identifierOf(wrong) });
        throw new AppError('CURRENT_PASSWORD_INVALID', "body.password is not the user's current password");
      }
    },
  };
}
