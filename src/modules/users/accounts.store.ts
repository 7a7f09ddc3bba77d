import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';

// Account-level reads of the users module's tables (user_tenants, users): counts per account and member statistics,
// and the one walk up the (live) account hierarchy that sub-account user management needs (as nearestMembership does).

/** True when `ancestorId` is a strict ancestor of the live account `tenantId` (a walk up, at most 1000 levels). */
export async function isAncestor(q: Queryable, ancestorId: string, tenantId: string): Promise<boolean> {
  const { rows } = await q.query(
    `WITH RECURSIVE up AS (
       SELECT tenant_id, parent_tenant_id, 0 AS d FROM (${accountTablesSql.accounts}) t
        WHERE tenant_id = $2 AND deleted_at IS NULL
       UNION ALL
       SELECT t.tenant_id, t.parent_tenant_id, up.d + 1
         FROM (${accountTablesSql.accounts}) t JOIN up ON t.tenant_id = up.parent_tenant_id
       WHERE up.d < 1000 AND t.deleted_at IS NULL)
     SELECT 1 FROM up WHERE tenant_id = $1 AND d > 0 LIMIT 1`,
    [ancestorId, tenantId],
  );
  return rows.length > 0;
}

/**
 * Members per account, and those allowed into its sub-accounts, for each id asked (none for an id with no members,
 * or that names no live account); `excludeInvisible` leaves invisible users out.
 */
export async function countMembers(q: Queryable, tenantIds: string[], excludeInvisible = false) {
  const { rows } = await q.query<{ tenant_id: string; n: number; allowed: number }>(
    `SELECT ut.tenant_id, count(*)::int AS n,
            count(*) FILTER (
              WHERE ut.sub_account_access_allowed OR t.sub_account_access_type = 'alwaysOn'
            )::int AS allowed
       FROM user_tenants ut
       JOIN (${accountTablesSql.accounts}) t ON t.tenant_id = ut.tenant_id AND t.deleted_at IS NULL
       ${excludeInvisible ? 'JOIN users u ON u.id = ut.user_id AND NOT u.invisible' : ''}
     WHERE ut.tenant_id = ANY($1::text[]) GROUP BY ut.tenant_id`,
    [tenantIds],
  );
  return new Map(rows.map((r) => [r.tenant_id, { n: r.n, allowed: r.allowed }]));
}

export interface MemberStats {
  total: number;
  activated: number;
  pending: number;
  disabled: number;
  addedThisWeek: number;
  superAdmins: number;
}

/**
 * An account's members by state: disabled (membership disabled), activated (not disabled, signed in at least once),
 * pending (not disabled, never signed in or invitation not accepted: invited or created and not yet used), and those who joined in the last 7 days.
 */
export async function memberStats(q: Queryable, tenantId: string): Promise<MemberStats> {
  const { rows } = await q.query<MemberStats>(
    `SELECT count(*)::int AS total,
            (count(*) FILTER (WHERE NOT ut.is_disabled AND NOT ut.pending AND u.last_login IS NOT NULL))::int AS activated,
            (count(*) FILTER (WHERE NOT ut.is_disabled AND (ut.pending OR u.last_login IS NULL)))::int AS pending,
            (count(*) FILTER (WHERE ut.is_disabled))::int AS disabled,
            (count(*) FILTER (WHERE ut.created_at > now() - interval '7 days'))::int AS "addedThisWeek",
            (count(*) FILTER (WHERE u.super_user))::int AS "superAdmins"
     FROM user_tenants ut JOIN users u ON u.id = ut.user_id
     WHERE ut.tenant_id = $1`,
    [tenantId],
  );
  return rows[0];
}

export async function hasMembers(q: Queryable, tenantId: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 LIMIT 1', [tenantId])).rows.length > 0;
}

/** The ids of the roles a member holds directly in an account (lower-case). */
export async function roleIdsOf(q: Queryable, tenantId: string, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    'SELECT role_id::text AS id FROM user_roles WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, userId],
  );
  return rows.map((r) => r.id);
}

/** Replaces a member's roles in an account (the membership must exist; roles checked by the caller). */
export async function replaceRoles(q: Queryable, tenantId: string, userId: string, roleIds: string[]): Promise<void> {
  await q.query('DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
  if (roleIds.length) {
    await q.query(
      'INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING',
      [tenantId, userId, roleIds],
    );
  }
}
