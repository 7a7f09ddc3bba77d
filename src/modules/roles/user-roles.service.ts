import { byUserOrder, userIdList } from '../../lib/id-order.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { MAX_USER_IDS, type UserRolesEntry } from './schema.ts';
import { membershipRoles, type UserTablesSql } from './user-roles.store.ts';

export interface UserRolesDeps {
  db: Db;
  /** The environment id, answered as `vendorId`. */
  vendorId: () => string;
  /** 404 unless the id names a live account. */
  requireAccount: (q: Queryable, tenantId: string) => Promise<void>;
  userTables: UserTablesSql;
}

/** The roles assigned to users, per account they belong to (GET /identity/resources/users/v3/roles). */
export function createUserRolesLookup(deps: UserRolesDeps) {
  const { db, vendorId, requireAccount, userTables } = deps;
  return {
    /**
     * One entry per membership of each user (`ids`: the query parameter's values, comma-joined or repeated): of
     * `tenantId` only when given (404 when it names no live account), else of every live account they belong to.
     * Users that do not exist or are not members are absent. One statement.
     */
    async userRoles(rawIds: readonly string[], tenantId?: string): Promise<UserRolesEntry[]> {
      const ids = userIdList(rawIds, 'querystring.ids', MAX_USER_IDS);
      if (tenantId !== undefined) await requireAccount(db, tenantId);
      const rows = await membershipRoles(db, userTables, ids, tenantId);
      const env = vendorId();
      const entries = rows.map((r) => ({
        vendorId: env,
        tenantId: r.tenant_id,
        userId: r.user_id,
        roleIds: r.role_ids,
      }));
      return byUserOrder(entries, ids);
    },
  };
}
