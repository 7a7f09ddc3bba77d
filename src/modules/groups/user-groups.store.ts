import type { Queryable } from '../../storage/db.ts';
import type { GroupRow } from './store.ts';

/** A membership with one of the user's groups there, or with none (every group column null). */
export type MembershipGroupRow = { user_id: string; member_tenant_id: string } & ({ [K in keyof GroupRow]: GroupRow[K] } | { [K in keyof GroupRow]: null });

/**
 * The groups of users in the accounts they belong to (of `tenantId` only, when given), one statement whatever the
 * number of users: a row per membership and group, or one with null group columns for a membership without groups.
 * Reads the users module's `user_tenants` (read-only, as `membersAmong` does); live accounts only.
 * `userIds`: lower-case uuids.
 */
export async function membershipGroups(q: Queryable, userIds: string[], tenantId?: string): Promise<MembershipGroupRow[]> {
  if (userIds.length === 0) return [];
  const params: unknown[] = [userIds];
  if (tenantId !== undefined) params.push(tenantId);
  const { rows } = await q.query<MembershipGroupRow>(
    `SELECT ut.user_id::text AS user_id, ut.tenant_id AS member_tenant_id, g.*
       FROM user_tenants ut
       JOIN tenants t ON t.tenant_id = ut.tenant_id AND t.deleted_at IS NULL
       LEFT JOIN group_users gu ON gu.tenant_id = ut.tenant_id AND gu.user_id = ut.user_id
       LEFT JOIN user_groups g ON g.tenant_id = gu.tenant_id AND g.id = gu.group_id
      WHERE ut.user_id = ANY($1::uuid[])${tenantId !== undefined ? ' AND ut.tenant_id = $2' : ''}
      ORDER BY ut.created_at, ut.tenant_id, ut.user_id, lower(g.name) COLLATE "C", g.id`,
    params,
  );
  return rows;
}
