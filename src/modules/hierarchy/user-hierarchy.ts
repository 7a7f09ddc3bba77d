import { isUuid } from '../../lib/pg-errors.ts';
import type { Db } from '../../storage/db.ts';
import type { UserTreeNode } from './schema.ts';
import { reachOf } from './user-hierarchy.store.ts';

/** The signed-in user's accounts as a forest (GET /identity/resources/users/v2/me/hierarchy). */
export function createUserHierarchy(deps: { db: Db; maxDepth: number }) {
  const { db, maxDepth } = deps;
  return {
    /**
     * The accounts the user belongs to and the sub-accounts their memberships open, as trees: an account whose parent
     * is in the answer is among that parent's children, any other is a top account. Only the user's own memberships
     * decide, never the account of the token, so no other account's hierarchy shows. A user id that is not a uuid
     * (an account API token's) belongs to no account: an empty forest.
     */
    async userHierarchy(userId: string): Promise<{ tenants: UserTreeNode[] }> {
      if (!isUuid(userId)) return { tenants: [] };
      const rows = await reachOf(db, userId.toLowerCase(), maxDepth);
      const nodes = new Map<string, UserTreeNode>(
        rows.map((r) => [
          r.tenant_id,
          {
            tenantId: r.tenant_id,
            tenantName: r.name,
            parentTenantId: r.parent_tenant_id,
            member: r.member,
            children: [],
          },
        ]),
      );
      const tenants: UserTreeNode[] = [];
      // Rows come in name order, so children and top accounts do too.
      for (const node of nodes.values()) {
        const parent = node.parentTenantId !== null ? nodes.get(node.parentTenantId) : undefined;
        (parent ? parent.children : tenants).push(node);
      }
      return { tenants };
    },
  };
}
