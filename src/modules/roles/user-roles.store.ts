import type { Queryable } from '../../storage/db.ts';

/**
 * The role ids assigned to users in the accounts they belong to, read-only over the users module's membership tables
 * (`user_tenants`, `user_roles`) as the token claims and API tokens read them. Live accounts only.
 */
export interface MembershipRolesRow {
  user_id: string;
  tenant_id: string;
  role_ids: string[];
}

/**
 * One row per membership of the users (of `tenantId` only, when given), users' accounts in the order they joined,
 * role ids in level then key order; one statement whatever the number of users. `userIds` must be lower-case uuids.
 */
export async function membershipRoles(q: Queryable, userIds: string[], tenantId?: string): Promise<MembershipRolesRow[]> {
  if (userIds.length === 0) return [];
  const params: unknown[] = [userIds];
  if (tenantId !== undefined) params.push(tenantId);
  const { rows } = await q.query<MembershipRolesRow>(
    `SELECT ut.user_id::text AS user_id, ut.tenant_id,
            coalesce(array_agg(r.id::text ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id)
                     FILTER (WHERE r.id IS NOT NULL), '{}') AS role_ids
       FROM user_tenants ut
       JOIN tenants t ON t.tenant_id = ut.tenant_id AND t.deleted_at IS NULL
       LEFT JOIN user_roles ur ON ur.tenant_id = ut.tenant_id AND ur.user_id = ut.user_id
       LEFT JOIN roles r ON r.id = ur.role_id
      WHERE ut.user_id = ANY($1::uuid[])${tenantId !== undefined ? ' AND ut.tenant_id = $2' : ''}
      GROUP BY ut.user_id, ut.tenant_id, ut.created_at
      ORDER BY ut.created_at, ut.tenant_id, ut.user_id`,
    params,
  );
  return rows;
}
