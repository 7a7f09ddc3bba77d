import { byUserOrder, uuidsInOrder } from '../../lib/id-order.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { RoleRecord, UserRolesEntry } from './schema.ts';
import type { RoleRow } from './store.ts';
import * as store from './store.ts';
import { membershipRoles } from './user-roles.store.ts';

export interface UserRolesDeps {
  db: Db;
  /** The role record as the roles routes answer it. */
  record: (r: RoleRow) => RoleRecord;
  /** 404 unless the id names a live account. */
  requireAccount: (q: Queryable, tenantId: string) => Promise<void>;
}

/** The roles assigned to users, per account they belong to (GET /identity/resources/users/v3/roles). */
export function createUserRolesLookup(deps: UserRolesDeps) {
  const { db, record, requireAccount } = deps;
  return {
    /**
     * One entry per membership of each user: of `tenantId` only when given (404 when it names no live account), else
     * of every live account they belong to. Users that do not exist or are not members are absent. Two statements.
     */
    async userRoles(userIds: readonly string[], tenantId?: string): Promise<UserRolesEntry[]> {
      if (tenantId !== undefined) await requireAccount(db, tenantId);
      const ids = uuidsInOrder(userIds);
      const rows = await membershipRoles(db, ids, tenantId);
      const roleIds = [...new Set(rows.flatMap((r) => r.role_ids))];
      // In level, then key order: each membership's roles keep it.
      const roles = roleIds.length ? (await store.rolesByIds(db, roleIds)).map(record) : [];
      const entries = rows.map((r) => {
        const held = new Set(r.role_ids);
        return { userId: r.user_id, tenantId: r.tenant_id, roles: roles.filter((role) => held.has(role.id)) };
      });
      return byUserOrder(entries, ids);
    },
  };
}
