import type { Queryable } from '../../storage/db.ts';
import type { GroupRow, UserTablesSql } from './store.ts';

/** A membership with one of the user's groups there, or with none (every group column null). */
export type MembershipGroupRow = { user_id: string; member_tenant_id: string } & (
  | { [K in keyof GroupRow]: GroupRow[K] }
  | { [K in keyof GroupRow]: null }
);

/**
 * The groups of users in the accounts they belong to (of `tenantId` only, when given), one statement whatever the
 * number of users: a row per membership and group, or one with null group columns for a membership without groups.
 * Memberships from the users module's `liveMemberships` (live accounts, pending memberships included).
 * `userIds`: lower-case uuids.
 */
export async function membershipGroups(
  q: Queryable,
  sql: UserTablesSql,
  userIds: string[],
  tenantId?: string,
): Promise<MembershipGroupRow[]> {
  if (userIds.length === 0) return [];
  const params: unknown[] = [userIds];
  if (tenantId !== undefined) params.push(tenantId);
  const { rows } = await q.query<MembershipGroupRow>(
    `SELECT m.user_id::text AS user_id, m.tenant_id AS member_tenant_id, g.*
       FROM (${sql.liveMemberships}) m
       LEFT JOIN group_users gu ON gu.tenant_id = m.tenant_id AND gu.user_id = m.user_id
       LEFT JOIN user_groups g ON g.tenant_id = gu.tenant_id AND g.id = gu.group_id
      WHERE m.user_id = ANY($1::uuid[])${tenantId !== undefined ? ' AND m.tenant_id = $2' : ''}
      ORDER BY m.created_at, m.tenant_id, m.user_id, lower(g.name) COLLATE "C", g.id`,
    params,
  );
  return rows;
}
