import { byUserOrder, uuidsInOrder } from '../../lib/id-order.ts';
import type { Db } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { UserGroupsEntry } from './schema.ts';
import { toSummary } from './summary.ts';
import { membershipGroups } from './user-groups.store.ts';

/** The groups of several users, per account they belong to (GET /identity/resources/users/v3/groups). */
export function createUserGroupsLookup(deps: { db: Db; tenants: TenantsService }) {
  const { db, tenants } = deps;
  return {
    /**
     * One entry per membership of each user: of `tenantId` only when given (404 when it names no live account), else
     * of every live account they belong to. Users that do not exist or are not members are absent. One statement.
     */
    async userGroups(userIds: readonly string[], tenantId?: string): Promise<UserGroupsEntry[]> {
      if (tenantId !== undefined) await tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const ids = uuidsInOrder(userIds);
      const entries = new Map<string, UserGroupsEntry>();
      for (const row of await membershipGroups(db, ids, tenantId)) {
        const key = `${row.user_id}\u0000${row.member_tenant_id}`;
        let entry = entries.get(key);
        if (!entry) entries.set(key, (entry = { userId: row.user_id, tenantId: row.member_tenant_id, groups: [] }));
        if (row.id !== null) entry.groups.push(toSummary(row));
      }
      return byUserOrder([...entries.values()], ids);
    },
  };
}
