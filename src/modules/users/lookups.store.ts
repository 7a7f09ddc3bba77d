import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';

// What other modules read of the users module's tables: whole statements, and the tables as subqueries for a
// statement of theirs that joins them (the planner flattens a plain subquery, so the join costs what it did).

/** The user columns other modules show (a group's members, a user pool's list), one row per user. */
export const USERS_SQL = 'SELECT id, email, name, profile_picture_url, created_at, last_login FROM users';

/** Every membership, pending ones (not accepted by the user) included; no check of the account. */
export const MEMBERSHIPS_SQL = `SELECT user_id, tenant_id, created_at, pending, is_disabled, temporary_expiration_date,
  sub_account_access_allowed FROM user_tenants`;

/**
 * The memberships of live accounts, pending ones included, with the account's name and whether the membership opens
 * the account's sub-accounts (accepted, neither disabled nor expired, and sub-account access on), as `accessTo` rules.
 */
export const LIVE_MEMBERSHIPS_SQL = `
  SELECT ut.user_id, ut.tenant_id, ut.created_at, ut.pending, ut.is_disabled, t.name AS account_name,
         (NOT ut.pending AND NOT ut.is_disabled
           AND (ut.temporary_expiration_date IS NULL OR ut.temporary_expiration_date > now())
           AND (t.sub_account_access_type = 'alwaysOn' OR ut.sub_account_access_allowed)) AS opens_sub_accounts
    FROM user_tenants ut JOIN (${accountTablesSql.liveAccounts}) t ON t.tenant_id = ut.tenant_id`;

/** The roles assigned to users in accounts: one row per user, account and role. */
export const USER_ROLES_SQL = 'SELECT user_id, tenant_id, role_id FROM user_roles';

/** The user's password hash: null when none, undefined when no such user. */
export async function passwordHashOf(q: Queryable, userId: string): Promise<string | null | undefined> {
  const { rows } = await q.query<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = $1', [
    userId,
  ]);
  return rows[0]?.password_hash;
}

/** Which of the ids are members of the account (direct memberships, pending ones included). */
export async function membersAmong(q: Queryable, tenantId: string, userIds: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ user_id: string }>(
    'SELECT user_id FROM user_tenants WHERE tenant_id = $1 AND user_id = ANY($2::uuid[])',
    [tenantId, userIds],
  );
  return new Set(rows.map((r) => r.user_id));
}

/** Whether the user has a membership of the account (pending included). `userId` must be a uuid. */
export async function isMember(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 AND user_id = $2', [
    tenantId,
    userId,
  ]);
  return rows.length > 0;
}

/** Whether the account has any member (pending included). */
export async function hasMembers(q: Queryable, tenantId: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 LIMIT 1', [tenantId]);
  return rows.length > 0;
}

/** The role ids assigned to the user in the account. */
export async function roleIdsIn(q: Queryable, tenantId: string, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ role_id: string }>(
    'SELECT role_id FROM user_roles WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, userId],
  );
  return rows.map((r) => r.role_id);
}
