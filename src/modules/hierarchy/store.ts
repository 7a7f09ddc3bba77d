import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql, liveAccount, setLiveColumns, type TenantRow } from '../tenants/index.ts';

// The accounts module's table, as its subquery (flattened by the planner: the walks keep their index scans).
const ACCOUNTS = `(${accountTablesSql.accounts})`;

/**
 * SQL for the hierarchy columns of accounts (parent_tenant_id, is_reseller, sub_account_access_type).
 * Walks are recursive CTEs that touch only the rows of the answer: up through the primary key, down through the
 * index `tenants_parent (parent_tenant_id, tenant_id) WHERE deleted_at IS NULL`. Every walk stops at `maxDepth`
 * levels, so even a corrupted (cyclic) hierarchy cannot make a query run away.
 */

/** Key of the transaction-scoped advisory lock that serialises every write of parent_tenant_id in this module. */
const HIERARCHY_LOCK = 7243301;

export interface WalkRow {
  tenant_id: string;
  name: string;
  parent_tenant_id: string | null;
  level: number;
}

/** Takes the hierarchy write lock until the end of the transaction `tx` runs in. */
export async function lockHierarchy(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [HIERARCHY_LOCK]);
}

/**
 * Locks a live account's row for the rest of the transaction (`update`: it is about to change; `share`: it must stay
 * live, so a concurrent removal waits for us, or we wait and then see it removed). Undefined when no live account has the id.
 */
export async function lockLive(
  tx: Queryable,
  tenantId: string,
  mode: 'update' | 'share',
): Promise<WalkRow | undefined> {
  const row = await liveAccount(tx, tenantId, mode === 'update' ? 'FOR UPDATE' : 'FOR SHARE');
  return row && { tenant_id: row.tenant_id, name: row.name, parent_tenant_id: row.parent_tenant_id, level: 0 };
}

/**
 * Ancestors of a live account, nearest first (level 1 = its parent). The walk starts from the account's own row
 * (level 0, a primary-key lookup) so that no plan can pick a scan of the parent index for it.
 */
export const ANCESTORS_SQL = `
  WITH RECURSIVE up (tenant_id, name, parent_tenant_id, level) AS (
    SELECT tenant_id, name, parent_tenant_id, 0
      FROM ${ACCOUNTS} t
     WHERE tenant_id = $1 AND deleted_at IS NULL
    UNION ALL
    SELECT p.tenant_id, p.name, p.parent_tenant_id, up.level + 1
      FROM up JOIN ${ACCOUNTS} p ON p.tenant_id = up.parent_tenant_id AND p.deleted_at IS NULL
     WHERE up.level < $2
  )
  SELECT tenant_id, name, parent_tenant_id, level FROM up WHERE level > 0 ORDER BY level`;

/** Descendants of an account, by level, then name (case-insensitive, "C" order), then tenant id. */
export const DESCENDANTS_SQL = `
  WITH RECURSIVE down (tenant_id, name, parent_tenant_id, level) AS (
    SELECT t.tenant_id, t.name, t.parent_tenant_id, 1
      FROM ${ACCOUNTS} t
     WHERE t.parent_tenant_id = $1 AND t.deleted_at IS NULL
    UNION ALL
    SELECT t.tenant_id, t.name, t.parent_tenant_id, down.level + 1
      FROM down JOIN ${ACCOUNTS} t ON t.parent_tenant_id = down.tenant_id AND t.deleted_at IS NULL
     WHERE down.level < $2
  )
  SELECT tenant_id, name, parent_tenant_id, level FROM down
   ORDER BY level, lower(name) COLLATE "C", tenant_id`;

export async function ancestors(db: Queryable, tenantId: string, maxDepth: number): Promise<WalkRow[]> {
  const { rows } = await db.query<WalkRow>(ANCESTORS_SQL, [tenantId, maxDepth]);
  return rows;
}

export async function descendants(db: Queryable, tenantId: string, maxDepth: number): Promise<WalkRow[]> {
  const { rows } = await db.query<WalkRow>(DESCENDANTS_SQL, [tenantId, maxDepth]);
  return rows;
}

/** Levels below an account: 0 for a leaf (walks at most `maxDepth` levels). */
export async function subtreeHeight(db: Queryable, tenantId: string, maxDepth: number): Promise<number> {
  const { rows } = await db.query<{ height: number }>(
    `WITH RECURSIVE down (tenant_id, level) AS (
       SELECT tenant_id, 1 FROM ${ACCOUNTS} t WHERE parent_tenant_id = $1 AND deleted_at IS NULL
       UNION ALL
       SELECT t.tenant_id, down.level + 1
         FROM down JOIN ${ACCOUNTS} t ON t.parent_tenant_id = down.tenant_id AND t.deleted_at IS NULL
        WHERE down.level < $2
     )
     SELECT coalesce(max(level), 0)::int AS height FROM down`,
    [tenantId, maxDepth],
  );
  return rows[0].height;
}

async function setColumn(
  db: Queryable,
  tenantId: string,
  column: 'parent_tenant_id' | 'is_reseller' | 'sub_account_access_type',
  value: unknown,
): Promise<TenantRow | undefined> {
  return setLiveColumns(db, tenantId, { [column]: value });
}

/** Sets (or with null clears) the parent of a live account. Call under `lockHierarchy`. */
export const setParent = (db: Queryable, tenantId: string, parentTenantId: string | null) =>
  setColumn(db, tenantId, 'parent_tenant_id', parentTenantId);
export const setReseller = (db: Queryable, tenantId: string, isReseller: boolean) =>
  setColumn(db, tenantId, 'is_reseller', isReseller);
export const setAccessType = (db: Queryable, tenantId: string, accessType: TenantRow['sub_account_access_type']) =>
  setColumn(db, tenantId, 'sub_account_access_type', accessType);
