import { AppError } from '../../http/errors.ts';
import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UsersCore } from './profile.service.ts';
import { isLockedNow } from './record.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';

/** How long an unlock token works (it also works once). */
export const UNLOCK_TOKEN_TTL_SECONDS = 3600;

/**
 * Issues an unlock token for a locked user, in the caller's transaction: 256 random bits, SHA-256 at rest, 1 hour,
 * single use; the user's earlier unused tokens are void. For the lockout (to email it) and the vendor route.
 */
export async function issueUnlockToken(q: Queryable, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = randomSecret(32);
  const expiresAt = new Date(Date.now() + UNLOCK_TOKEN_TTL_SECONDS * 1000);
  await q.query('DELETE FROM user_unlock_tokens WHERE user_id = $1 AND used_at IS NULL', [userId]);
  await q.query('INSERT INTO user_unlock_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
    sha256Hex(token),
    userId,
    expiresAt,
  ]);
  return { token, expiresAt };
}

/** Self-service unlock of a user locked by the lockout policy (or an administrator), with a one-time token. */
export function createUnlockOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;
  return {
    /** Vendor: an unlock token for a locked user, to deliver by other means; 409 when the user is not locked. */
    async generateUnlockToken(userId: string): Promise<{ token: string; userId: string; expiresAt: string }> {
      return db.transaction(async (tx) => {
        const user = await core.requireUser(tx, userId, true);
        if (!isLockedNow(user))
          throw new AppError(
            'CONFLICT',
            `User ${userId} is not locked; an unlock token is issued only for a locked user`,
          );
        const { token, expiresAt } = await issueUnlockToken(tx, user.id);
        return { token, userId: user.id, expiresAt: expiresAt.toISOString() };
      });
    },

    /**
     * Redeems a token: the user is unlocked and the failure count reset (user.unlocked, reason self_service). 400 for
     * an unknown token, 410 for a used or expired one. A user no longer locked (the lock expired or an administrator
     * lifted it) is left as is; the token is used up either way.
     */
    async unlockWithToken(token: string): Promise<void> {
      await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ user_id: string; expires_at: Date; used_at: Date | null }>(
          'SELECT user_id, expires_at, used_at FROM user_unlock_tokens WHERE token_hash = $1 FOR UPDATE',
          [sha256Hex(token)],
        );
        const row = rows[0];
        if (!row) throw new AppError('CODE_INVALID', 'body.token is not an unlock token');
        if (row.used_at || row.expires_at <= new Date())
          throw new AppError('CODE_EXPIRED', 'body.token has expired or was already used; ask for a new unlock email');
        await tx.query('UPDATE user_unlock_tokens SET used_at = now() WHERE token_hash = $1', [sha256Hex(token)]);
        const user = await core.requireUser(tx, row.user_id, true);
        if (!user.is_locked && user.failed_attempts === 0) return;
        await store.updateUser(tx, user.id, { is_locked: false, locked_until: null, failed_attempts: 0 });
        if (user.is_locked) {
          await deps.events?.emit(tx, {
            eventKey: 'user.unlocked',
            tenantId: user.active_tenant_id,
            entity: { type: 'user', id: user.id },
            data: { userId: user.id, email: user.email, tenantId: user.active_tenant_id, reason: 'self_service' },
          });
        }
      });
    },
  };
}
