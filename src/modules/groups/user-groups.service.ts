import { byUserOrder, userIdList } from '../../lib/id-order.ts';
import type { Db } from '../../storage/db.ts';
import { MAX_USER_IDS } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { UserGroupsEntry } from './schema.ts';
import type { UserTablesSql } from './store.ts';
import { membershipGroups } from './user-groups.store.ts';

/** The groups of several users, per account they belong to (GET /identity/resources/users/v3/groups). */
export function createUserGroupsLookup(deps: {
  db: Db;
  tenants: TenantsService;
  vendorId: () => string;
  userTables: UserTablesSql;
}) {
  const { db, tenants, vendorId, userTables } = deps;
  return {
    /**
     * One entry per membership of each user (`ids`: the query parameter's values, comma-joined or repeated): of
     * `tenantId` only when given (404 when it names no live account), else of every live account they belong to.
     * Users that do not exist or are not members are absent. One statement.
     */
    async userGroups(rawIds: readonly string[], tenantId?: string): Promise<UserGroupsEntry[]> {
      const ids = userIdList(rawIds, 'querystring.ids', MAX_USER_IDS);
      if (tenantId !== undefined) await tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const entries = new Map<string, UserGroupsEntry>();
      for (const row of await membershipGroups(db, userTables, ids, tenantId)) {
        const key = `${row.user_id}\u0000${row.member_tenant_id}`;
        let entry = entries.get(key);
        if (!entry) {
          entry = { vendorId: vendorId(), tenantId: row.member_tenant_id, userId: row.user_id, groupIds: [] };
          entries.set(key, entry);
        }
        if (row.id !== null) entry.groupIds.push(row.id);
      }
      return byUserOrder([...entries.values()], ids);
    },
  };
}
