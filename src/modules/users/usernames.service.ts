import { AppError } from '../../http/errors.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UsersCore } from './profile.service.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';
import { listUsernames, setUsername } from './usernames.store.ts';

export interface UsernamesQuery {
  _limit?: number;
  _offset?: number;
  _sortBy?: 'userId' | 'username';
  _order?: 'ASC' | 'DESC';
  _usernamePrefix?: string;
  userIds?: string[];
}

export interface UsernameAnswer {
  username: string;
  userId: string;
}

/**
 * Usernames: a second sign-in identifier beside the email, at most one per user, unique in the environment without
 * regard to case (the unique index on lower(username)); a taken one is a 409 USERNAME_TAKEN. `tenantId`, when given,
 * scopes the call to the members of that account (a user token's account, or the tenant header of a vendor call).
 */
export function createUsernameOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;

  const target = (q: Queryable, userId: string, tenantId?: string) =>
    tenantId ? core.requireMembership(q, tenantId, userId) : core.requireUser(q, userId, true);

  async function changed(tx: Queryable, user: store.UserRow, username: string | null) {
    await deps.events?.emit(tx, {
      eventKey: 'user.updated',
      tenantId: user.active_tenant_id,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, email: user.email, tenantId: user.active_tenant_id, changed: ['username'], username },
    });
  }

  return {
    /** Users with a username (of the account when given), one page as wire.md section 5 describes. */
    async listUsernames(query: UsernamesQuery, tenantId?: string) {
      const limit = query._limit ?? 50;
      const page = query._offset ?? 0;
      const ids = query.userIds
        ?.flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean);
      // An id that is not a user id names no user: it matches nothing (as an unknown uuid does).
      const userIds = ids?.filter((id) => isUuid(id));
      if (ids && ids.length > 200)
        throw new AppError('VALIDATION', 'query.userIds: at most 200 ids', { fields: ['userIds'] });
      const { rows, total } = await listUsernames(db, {
        limit,
        page,
        tenantId,
        prefix: query._usernamePrefix?.trim() || undefined,
        userIds,
        sortBy: query._sortBy ?? 'username',
        order: query._order ?? 'ASC',
      });
      const vendorId = deps.environment.id;
      return { items: rows.map((r) => ({ vendorId, userId: r.id, username: r.username })), total, limit, page };
    },

    /** Sets a user's username; `created` is false when it replaced one (or was already this one). */
    async setUsername(
      userId: string,
      username: string,
      tenantId?: string,
    ): Promise<UsernameAnswer & { created: boolean }> {
      try {
        return await db.transaction(async (tx) => {
          const user = await target(tx, userId, tenantId);
          const holder = await store.findByUsername(tx, username);
          if (holder && holder.id !== user.id) throw new AppError('USERNAME_TAKEN', `Username ${username} is taken`);
          if (user.username !== username) {
            await setUsername(tx, user.id, username);
            await changed(tx, user, username);
          }
          return { username, userId: user.id, created: user.username === null };
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new AppError('USERNAME_TAKEN', `Username ${username} is taken`);
        throw err;
      }
    },

    /**
     * Removes a username (the user keeps signing in with the email). `owner`: only that user's own username (a user
     * token); another user's answers the same 404 as an unknown one. `tenantId`: only a member of that account's.
     */
    async deleteUsername(username: string, scope: { owner?: string; tenantId?: string } = {}): Promise<void> {
      await db.transaction(async (tx) => {
        const user = await store.findByUsername(tx, username);
        const missing = () => new AppError('USERNAME_NOT_FOUND', `No user has the username ${username}`);
        if (!user || (scope.owner && user.id !== scope.owner)) throw missing();
        if (scope.tenantId) {
          const { rows } = await tx.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 AND user_id = $2', [
            scope.tenantId,
            user.id,
          ]);
          if (rows.length === 0) throw missing();
        }
        if (!user.email)
          throw new AppError(
            'CONFLICT',
            `Username ${username} is the only identifier of user ${user.id} (no email): it cannot be removed, only replaced`,
          );
        await setUsername(tx, user.id, null);
        await changed(tx, user, null);
      });
    },

    /** The user's own username; 404 when they have none. */
    async usernameOf(userId: string): Promise<UsernameAnswer> {
      const user = await core.requireUser(db, userId);
      if (!user.username) throw new AppError('USERNAME_NOT_FOUND', `User ${userId} has no username`);
      return { username: user.username, userId: user.id };
    },
  };
}
