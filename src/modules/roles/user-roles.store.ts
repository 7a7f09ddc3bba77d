import type { Queryable } from '../../storage/db.ts';

/**
 * The users module's tables as subqueries (its `userTablesSql`), given by the wiring: the users module imports this
 * one. Joined inside the lookup's statement, so it stays one statement.
 */
export interface UserTablesSql {
  liveMemberships: string;
  userRoles: string;
}

/** The role ids assigned to users in the accounts they belong to (live accounts only). */
export interface MembershipRolesRow {
  user_id: string;
  tenant_id: string;
  role_ids: string[];
}

/**
 * One row per membership of the users (of `tenantId` only, when given), users' accounts in the order they joined,
 * role ids in level then key order; one statement whatever the number of users. `userIds` must be lower-case uuids.
 */
export async function membershipRoles(
  q: Queryable,
  sql: UserTablesSql,
  userIds: string[],
  tenantId?: string,
): Promise<MembershipRolesRow[]> {
  if (userIds.length === 0) return [];
  const params: unknown[] = [userIds];
  if (tenantId !== undefined) params.push(tenantId);
  const { rows } = await q.query<MembershipRolesRow>(
    `SELECT m.user_id::text AS user_id, m.tenant_id,
            coalesce(array_agg(r.id::text ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id)
                     FILTER (WHERE r.id IS NOT NULL), '{}') AS role_ids
       FROM (${sql.liveMemberships}) m
       LEFT JOIN (${sql.userRoles}) ur ON ur.tenant_id = m.tenant_id AND ur.user_id = m.user_id
       LEFT JOIN roles r ON r.id = ur.role_id
      WHERE m.user_id = ANY($1::uuid[])${tenantId !== undefined ? ' AND m.tenant_id = $2' : ''}
      GROUP BY m.user_id, m.tenant_id, m.created_at
      ORDER BY m.created_at, m.tenant_id, m.user_id`,
    params,
  );
  return rows;
}
