import { AppError } from '../../http/errors.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import type { Db } from '../../storage/db.ts';
import type { HierarchyNodeV2 } from './tree-v2.schema.ts';
import { subtree } from './tree-v2.store.ts';
import { reachOf } from './user-hierarchy.store.ts';

/**
 * Who reads the tree: an environment token (any account, named by the tenant header); an account's own machine token
 * (account API or access token: the whole subtree of its account); or a user, who sees their account and those
 * descendants that their memberships open (the reach of GET /identity/resources/users/v2/me/hierarchy).
 */
export type Viewer = { kind: 'vendor' } | { kind: 'account' } | { kind: 'user'; userId: string };

/** GET /tenants/resources/hierarchy/v2 and /v2/metadata: the calling account's tree, nested, filtered by reach. */
export function createTreeV2(deps: { db: Db; maxDepth: number }) {
  const { db, maxDepth } = deps;

  /** The accounts a user reaches (ids), or undefined when the viewer sees the whole subtree. */
  async function reachable(viewer: Viewer): Promise<Set<string> | undefined> {
    if (viewer.kind !== 'user') return undefined;
    if (!isUuid(viewer.userId)) return new Set();
    return new Set((await reachOf(db, viewer.userId.toLowerCase(), maxDepth)).map((r) => r.tenant_id));
  }

  return {
    /**
     * The account `tenantId` (the token's account, or the tenant header's) with its sub-accounts as nested nodes,
     * children by name then id. A user sees a sub-account only when they reach it and its parent is shown, so the
     * answer is one connected tree and never shows an account outside the user's reach. `field` names where the id
     * came from, for the 404 of an account that does not exist (or was removed).
     */
    async treeV2(
      tenantId: string,
      viewer: Viewer,
      opts: { metadata: boolean; field: string },
    ): Promise<HierarchyNodeV2> {
      const [rows, reach] = await Promise.all([subtree(db, tenantId, maxDepth, opts.metadata), reachable(viewer)]);
      if (rows.length === 0 || rows[0].level !== 0)
        throw new AppError('ACCOUNT_NOT_FOUND', `No account with ${opts.field} ${tenantId}`);
      const nodes = new Map<string, HierarchyNodeV2>();
      let root: HierarchyNodeV2 | undefined;
      // Rows come by level, so a parent is placed before its children.
      for (const r of rows) {
        const node: HierarchyNodeV2 = {
          tenantId: r.tenant_id,
          tenantName: r.name,
          parentTenantId: r.parent_tenant_id,
          level: r.level,
          ...(opts.metadata ? { metadata: JSON.stringify(r.metadata ?? {}) } : {}),
          children: [],
        };
        if (r.level === 0) {
          root = node;
        } else {
          const parent = nodes.get(r.parent_tenant_id!);
          if (!parent || (reach && !reach.has(r.tenant_id))) continue;
          parent.children.push(node);
        }
        nodes.set(node.tenantId, node);
      }
      return root!;
    },
  };
}
