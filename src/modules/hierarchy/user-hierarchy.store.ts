import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';
import { userTablesSql } from '../users/index.ts';

// The accounts module's table, as its subquery (flattened by the planner: the walk keeps its index scans).
const ACCOUNTS = `(${accountTablesSql.accounts})`;

export interface ReachRow {
  tenant_id: string;
  name: string;
  parent_tenant_id: string | null;
  member: boolean;
}

/**
 * The live accounts a user reaches, by name (case-insensitive, "C" order) then tenant id: those they belong to
 * (`member`), and the sub-accounts below a membership that opens them, as the sign-in's `accessTo` decides (the
 * nearest membership above an account governs it: it must have sub-account access, an `alwaysOn` account or
 * `sub_account_access_allowed`, and be neither disabled nor expired). The walk down never passes through another
 * membership, which governs its own subtree. Pending memberships (not accepted) count for nothing. Memberships
 * from the users module's `liveMemberships` (whose `opens_sub_accounts` is that rule); one statement.
 */
export const USER_REACH_SQL = `
  WITH RECURSIVE member AS (
    SELECT m.tenant_id, m.opens_sub_accounts AS opens
      FROM (${userTablesSql.liveMemberships}) m
     WHERE m.user_id = $1 AND NOT m.pending
  ),
  down (tenant_id, level) AS (
    SELECT c.tenant_id, 1
      FROM member m JOIN ${ACCOUNTS} c ON c.parent_tenant_id = m.tenant_id AND c.deleted_at IS NULL
     WHERE m.opens AND NOT EXISTS (SELECT 1 FROM member x WHERE x.tenant_id = c.tenant_id)
    UNION ALL
    SELECT c.tenant_id, down.level + 1
      FROM down JOIN ${ACCOUNTS} c ON c.parent_tenant_id = down.tenant_id AND c.deleted_at IS NULL
     WHERE down.level < $2 AND NOT EXISTS (SELECT 1 FROM member x WHERE x.tenant_id = c.tenant_id)
  ),
  reach AS (
    SELECT tenant_id, true AS member FROM member
    UNION
    SELECT tenant_id, false FROM down
  )
  SELECT t.tenant_id, t.name, t.parent_tenant_id, r.member
    FROM reach r JOIN ${ACCOUNTS} t ON t.tenant_id = r.tenant_id
   ORDER BY lower(t.name) COLLATE "C", t.tenant_id`;

/** `userId` must be a uuid (user ids are). */
export async function reachOf(q: Queryable, userId: string, maxDepth: number): Promise<ReachRow[]> {
  const { rows } = await q.query<ReachRow>(USER_REACH_SQL, [userId, maxDepth]);
  return rows;
}
