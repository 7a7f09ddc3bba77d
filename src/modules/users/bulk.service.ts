import { AppError, catalogue } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Inviter } from './accounts.service.ts';
import * as bulk from './bulk.store.ts';
import type { UsersCore } from './profile.service.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';

/**
 * Users per bulk invitation request: the invitations run while the request waits (see docs/decisions.md), and each
 * given password costs an argon2id hash (~20 ms), so 100 keeps the answer within a few seconds.
 */
export const BULK_INVITE_MAX = 100;
/** Accounts per bulk role update. */
export const BULK_ROLES_MAX_TENANTS = 500;

type By = Parameters<Inviter>[2];

const failure = (err: unknown) =>
  err instanceof AppError
    ? { errorCode: err.errorCode, message: err.message }
    : { errorCode: catalogue.INTERNAL.errorCode, message: 'The invitation failed unexpectedly; retry this user' };

function inviteStatus(t: bulk.BulkTaskRow) {
  return {
    id: t.id,
    tenantId: t.tenant_id!,
    status: t.status,
    total: t.total,
    processed: t.processed,
    succeeded: t.succeeded,
    failed: t.failed,
    users: (t.details.users ?? []) as { index: number; email: string; userId: string }[],
    errors: t.errors as { index: number; email: string; errorCode: string; message: string }[],
    createdAt: iso(t.created_at)!,
    completedAt: iso(t.completed_at),
  };
}

function rolesStatus(t: bulk.BulkTaskRow) {
  return {
    id: t.id,
    userId: t.user_id!,
    status: t.status,
    totalTenants: t.total,
    processedTenants: t.processed,
    addedRoleIds: (t.details.addedRoleIds ?? []) as string[],
    removedRoleIds: (t.details.removedRoleIds ?? []) as string[],
    errors: t.errors as { message: string; tenantId: string }[],
    createdAt: iso(t.created_at)!,
    completedAt: iso(t.completed_at),
  };
}

/** Bulk invitations to an account, roles of a user across accounts, and moving all users of an account to another. */
export function createBulkOps(deps: UsersDeps, core: UsersCore, inviter: () => Inviter | undefined) {
  const { db, roles } = deps;

  return {
    /**
     * Invites each user to the account as POST /users/v2 does (new or existing user, invitation email unless
     * skipInviteEmail), one after another, each in its own transaction: a refused user (taken username, already a
     * member, bad password...) is listed in `errors` with its index and the others go on. The task record is kept.
     */
    async bulkInvite(tenantId: string, users: Record<string, unknown>[], by: By) {
      const invite = inviter();
      if (!invite) throw new Error('bulk invitation needs the invitations module (UsersDeps.invite)');
      await deps.tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const createdAt = new Date();
      const done: { index: number; email: string; userId: string }[] = [];
      const errors: { index: number; email: string; errorCode: string; message: string }[] = [];
      for (const [index, body] of users.entries()) {
        const email = String(body.email ?? '')
          .trim()
          .toLowerCase();
        try {
          const user = await invite(tenantId, body, by);
          done.push({ index, email, userId: user.id });
        } catch (err) {
          errors.push({ index, email, ...failure(err) });
        }
      }
      const task = await bulk.insertTask(db, {
        id: newId(),
        kind: 'invite',
        tenant_id: tenantId,
        user_id: null,
        status: 'completed',
        total: users.length,
        processed: users.length,
        succeeded: done.length,
        failed: errors.length,
        details: { users: done },
        errors,
        createdAt,
      });
      return inviteStatus(task);
    },

    /** A bulk invitation's record; with `tenantId` (a user token's account), only that account's. */
    async bulkInviteStatus(id: string, tenantId?: string) {
      const task = isUuid(id) ? await bulk.findTask(db, id, 'invite') : undefined;
      if (!task || (tenantId && task.tenant_id !== tenantId))
        throw new AppError('BULK_TASK_NOT_FOUND', `No bulk invitation task ${id}`);
      return inviteStatus(task);
    },

    /**
     * Adds and removes roles of a user in many accounts (`tenantIds`, else every account the user belongs to), in one
     * transaction. Unknown role ids are a 400 (nothing changes); an account the user is not a member of, or where an
     * added role is out of reach (another account's own role), is skipped and listed in `errors`.
     */
    async bulkRoles(userId: string, body: { addRoleIds?: string[]; removeRoleIds?: string[]; tenantIds?: string[] }) {
      const add = [...new Set(body.addRoleIds ?? [])];
      const remove = [...new Set(body.removeRoleIds ?? [])];
      if (add.length === 0 && remove.length === 0)
        throw new AppError('VALIDATION', 'body.addRoleIds or body.removeRoleIds must name at least one role', {
          fields: ['addRoleIds', 'removeRoleIds'],
        });
      const both = add.filter((id) => remove.includes(id));
      if (both.length)
        throw new AppError('VALIDATION', `body.addRoleIds and body.removeRoleIds both name ${both.join(', ')}`, {
          fields: ['addRoleIds', 'removeRoleIds'],
        });
      const createdAt = new Date();
      const task = await db.transaction(async (tx) => {
        const user = await core.requireUser(tx, userId, true);
        const asked = [...add, ...remove];
        const known = await roles.rolesByIds(tx, asked.filter(isUuid));
        const unknown = asked.filter((id) => !known.some((r) => r.id === id));
        if (unknown.length)
          throw new AppError('UNKNOWN_IDS', `body.addRoleIds/removeRoleIds: no roles ${unknown.join(', ')}`, {
            ids: unknown,
          });
        const memberships = await store.memberships(tx, user.id);
        const member = new Set(memberships.map((m) => m.tenant_id));
        const targets = body.tenantIds ? [...new Set(body.tenantIds)] : [...member];
        const errors: { message: string; tenantId: string }[] = [];
        const affected: string[] = [];
        for (const tenantId of targets) {
          if (!member.has(tenantId)) {
            errors.push({ tenantId, message: `User ${user.id} is not a member of account ${tenantId}` });
            continue;
          }
          const outOfReach = known.filter((r) => add.includes(r.id) && r.tenantId !== null && r.tenantId !== tenantId);
          if (outOfReach.length) {
            errors.push({
              tenantId,
              message: `Roles ${outOfReach.map((r) => r.id).join(', ')} belong to another account and cannot be assigned in ${tenantId}`,
            });
            continue;
          }
          await store.addRoles(tx, tenantId, user.id, add);
          if (remove.length) await store.removeRoles(tx, tenantId, user.id, remove);
          affected.push(tenantId);
        }
        await deps.events?.emitMany(
          tx,
          affected.map((tenantId) => ({
            eventKey: 'user.updated' as const,
            tenantId,
            entity: { type: 'user', id: user.id },
            data: {
              userId: user.id,
              email: user.email,
              tenantId,
              changed: ['roles'],
              addedRoleIds: add,
              removedRoleIds: remove,
            },
          })),
        );
        return bulk.insertTask(tx, {
          id: newId(),
          kind: 'roles',
          tenant_id: null,
          user_id: user.id,
          status: 'completed',
          total: targets.length,
          processed: targets.length,
          succeeded: affected.length,
          failed: errors.length,
          details: { addedRoleIds: add, removedRoleIds: remove, tenantIds: affected },
          errors,
          createdAt,
        });
      });
      return {
        userId: task.user_id!,
        affectedTenants: task.succeeded,
        rolesAdded: add,
        rolesRemoved: remove,
        taskId: task.id,
        errors: task.errors as { message: string; tenantId: string }[],
      };
    },

    async bulkRolesStatus(taskId: string) {
      const task = isUuid(taskId) ? await bulk.findTask(db, taskId, 'roles') : undefined;
      if (!task) throw new AppError('BULK_TASK_NOT_FOUND', `No bulk roles task ${taskId}`);
      return rolesStatus(task);
    },

    /**
     * Moves every member of `srcTenantId` to `targetTenantId` in one transaction: each becomes a member of the target
     * (disabled state and expiry kept) with the environment-wide roles they held in the source, or the target's default
     * roles when none; members of both keep their target membership as it is. Then the source has no members (its
     * account-only state of them goes: roles, groups, invitations, API tokens) and whose active account it was, is
     * now in the target. user.updated for each moved user.
     */
    async migrateAccountUsers(srcTenantId: string, targetTenantId: string) {
      if (srcTenantId === targetTenantId)
        throw new AppError('VALIDATION', 'body.targetTenantId must differ from body.srcTenantId', {
          fields: ['targetTenantId'],
        });
      return db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, srcTenantId, 'srcTenantId', 'FOR UPDATE');
        const target = await deps.tenants.requireLive(tx, targetTenantId, 'targetTenantId', 'FOR SHARE');
        const added = await bulk.copyMemberships(
          tx,
          srcTenantId,
          targetTenantId,
          target.sub_account_access_type !== 'defaultOff',
        );
        const envRoles = (await roles.rolesByIds(tx, await bulk.roleIdsInAccount(tx, srcTenantId)))
          .filter((r) => r.tenantId === null)
          .map((r) => r.id);
        await bulk.copyRoles(tx, srcTenantId, targetTenantId, added, envRoles);
        const bare = await bulk.withoutRoles(tx, targetTenantId, added);
        if (bare.length)
          await bulk.addRolesToUsers(tx, targetTenantId, bare, await roles.defaultRoleIds(tx, targetTenantId));
        const moved = await bulk.removeAllMembers(tx, srcTenantId, targetTenantId);
        await deps.events?.emitMany(
          tx,
          moved.map((u) => ({
            eventKey: 'user.updated' as const,
            tenantId: targetTenantId,
            entity: { type: 'user', id: u.user_id },
            data: {
              userId: u.user_id,
              email: u.email,
              tenantId: targetTenantId,
              changed: ['tenantIds'],
              fromTenantId: srcTenantId,
              reason: 'account_users_moved',
            },
          })),
        );
        return { srcTenantId, targetTenantId, movedUsers: moved.length, alreadyMembers: moved.length - added.length };
      });
    },
  };
}
