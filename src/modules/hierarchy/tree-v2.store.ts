import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';

// The accounts module's table, as its subquery (flattened by the planner: the walk keeps its index scans).
const ACCOUNTS = `(${accountTablesSql.accounts})`;

export interface TreeRow {
  tenant_id: string;
  name: string;
  parent_tenant_id: string | null;
  level: number;
  /** Only when asked for (`withMetadata`); null otherwise. */
  metadata: Record<string, unknown> | null;
}

/**
 * The live account `$1` (level 0) and its live descendants, by level, then name (case-insensitive, "C" order), then
 * tenant id; at most `$2` levels down; each row's metadata when `$3`. Undefined root: no live account has the id.
 */
const TREE_SQL = `
  WITH RECURSIVE down (tenant_id, level) AS (
    SELECT tenant_id, 0 FROM ${ACCOUNTS} t WHERE tenant_id = $1 AND deleted_at IS NULL
    UNION ALL
    SELECT t.tenant_id, down.level + 1
      FROM down JOIN ${ACCOUNTS} t ON t.parent_tenant_id = down.tenant_id AND t.deleted_at IS NULL
     WHERE down.level < $2
  )
  SELECT t.tenant_id, t.name, t.parent_tenant_id, d.level, CASE WHEN $3 THEN t.metadata END AS metadata
    FROM down d JOIN ${ACCOUNTS} t ON t.tenant_id = d.tenant_id
   ORDER BY d.level, lower(t.name) COLLATE "C", t.tenant_id`;

export async function subtree(
  q: Queryable,
  tenantId: string,
  maxDepth: number,
  withMetadata: boolean,
): Promise<TreeRow[]> {
  const { rows } = await q.query<TreeRow>(TREE_SQL, [tenantId, maxDepth, withMetadata]);
  return rows;
}
