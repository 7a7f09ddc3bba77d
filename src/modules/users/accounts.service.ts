import { AppError } from '../../http/errors.ts';
import { holdsPermission } from '../../lib/permissions.ts';
import type { Queryable } from '../../storage/db.ts';
import type { Grantor } from '../roles/index.ts';
import * as accounts from './accounts.store.ts';
import { accessTo } from './memberships.ts';
import type { UsersCore } from './profile.service.ts';
import type { User } from './schema.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';

/**
 * Who acts on an account's users: an environment token (any live account), or a signed-in user: `tenantId` is the
 * account of their token, `permissions` and `roleKeys` what it holds there (the route guard has checked them).
 */
export type Caller = Grantor;

/** Invites a user (new or existing) to an account, as POST /identity/resources/users/v2 does (the invitations module's). */
export type Inviter = (tenantId: string, body: Record<string, unknown>, by: Grantor) => Promise<User>;

/** Sub-account reach, role replacement, counts and statistics (for the users service, service.ts). */
export function createAccountOps(deps: UsersDeps, core: UsersCore) {
  const { db, roles } = deps;

  const outside = (tenantId: string) =>
    new AppError('OUTSIDE_HIERARCHY', `Account ${tenantId} is not your account or a sub-account your access reaches`);

  return {
    /**
     * May `caller` manage the users of account `tenantId` with `permission`? An environment token: when the account is
     * live (404 otherwise). A user: only their token's account or one of its sub-accounts, and only through a usable
     * membership, the nearest one from `tenantId` up (their own, or an ancestor's with sub-account access, not disabled
     * or expired); the permission must be held there (a membership other than the token's account: by its own roles).
     * Any other id answers the same 403 whether or not it names an account.
     */
    async reachAccount(caller: Caller, tenantId: string, permission: string, q: Queryable = db): Promise<void> {
      if (caller.kind === 'vendor') {
        await deps.tenants.requireLive(q, tenantId, 'gatehouse-tenant-id');
        return;
      }
      if (tenantId !== caller.tenantId && !(await accounts.isAncestor(q, caller.tenantId, tenantId)))
        throw outside(tenantId);
      const membership = await accessTo(q, caller.userId, tenantId);
      if (!membership) throw outside(tenantId);
      const held =
        membership.tenant_id === caller.tenantId
          ? caller.permissions
          : await roles.permissionKeysOfRoles(q, membership.role_ids);
      if (!holdsPermission(held, permission)) {
        throw new AppError(
          'MISSING_PERMISSION',
          `Managing the users of account ${tenantId} needs the permission ${permission} in account ${membership.tenant_id}`,
        );
      }
    },

    /**
     * Replaces a member's roles in the account (an empty list removes them all); 400 for roles out of the account's
     * reach; 403 when a role added or taken away is beyond the caller (roles kept as they are need no check).
     */
    async setRoles(tenantId: string, userId: string, roleIds: string[], caller: Caller) {
      return db.transaction(async (tx) => {
        await core.requireMembership(tx, tenantId, userId);
        await roles.assertAssignable(tx, tenantId, roleIds);
        const held = await accounts.roleIdsOf(tx, tenantId, userId);
        const wanted = new Set(roleIds.map((id) => id.toLowerCase()));
        await roles.assertGrantable(
          tx,
          tenantId,
          caller,
          roleIds.filter((id) => !held.includes(id.toLowerCase())),
        );
        await roles.assertRevocable(
          tx,
          tenantId,
          caller,
          held.filter((id) => !wanted.has(id)),
        );
        await accounts.replaceRoles(tx, tenantId, userId, roleIds);
        return {
          tenantId,
          userId,
          roles: (await core.record(tx, (await store.findById(tx, userId))!, tenantId)).roles,
        };
      });
    },

    /**
     * A user who creates or invites the first member of an account (a sub-account they reach) without roleIds gives
     * that member the account's first-user roles: 403 unless the caller may grant them. Checked before the call.
     */
    async assertFirstMemberRoles(
      tenantId: string,
      caller: Caller,
      roleIds: readonly string[] | undefined,
    ): Promise<void> {
      if (caller.kind === 'vendor' || roleIds?.length) return;
      if (await accounts.hasMembers(db, tenantId)) return;
      const ids = await roles.firstUserRoleIds(db, tenantId);
      await roles.assertGrantableExisting(db, tenantId, caller, ids, 'roleIds (none: the first-user roles)');
    },

    /** Members of each account asked, in the order asked (ids repeated once); 0 for an unknown or removed account. */
    async countUsers(tenantIds: string[], excludeInvisible = false) {
      const ids = [...new Set(tenantIds)];
      const counts = await accounts.countMembers(db, ids, excludeInvisible);
      return ids.map((tenantId) => {
        const c = counts.get(tenantId);
        return { tenantId, totalUsers: c?.n ?? 0, totalAccessAllowedUsers: c?.allowed ?? 0 };
      });
    },

    /** Member counts of a live account (see accounts.store.ts memberStats). */
    async memberStats(tenantId: string): Promise<accounts.MemberStats> {
      await deps.tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      return accounts.memberStats(db, tenantId);
    },

    /** The roles a member of the account may be given: the environment's roles and the account's own. */
    assignableRoles: (tenantId: string) => roles.list(tenantId),

    /**
     * The invitation of a user to an account lives in the invitations module, which depends on this one: it lends its
     * invite here (UsersDeps.invite) so the sub-account invite route can call it; without it those routes are absent.
     */
    inviter: (): Inviter | undefined => deps.invite,
  };
}
