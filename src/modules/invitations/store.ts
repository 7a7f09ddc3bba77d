import type { Queryable } from '../../storage/db.ts';
import { signupTablesSql } from '../signup/index.ts';
import { accountTablesSql } from '../tenants/index.ts';
import { userTablesSql } from '../users/index.ts';

export interface InvitationRow {
  tenant_id: string;
  user_id: string;
  invited_by: string | null;
  created_at: Date;
  accepted_at: Date | null;
}

export async function insertInvitation(
  q: Queryable,
  tenantId: string,
  userId: string,
  invitedBy: string | null,
): Promise<void> {
  await q.query('INSERT INTO user_invitations (tenant_id, user_id, invited_by) VALUES ($1, $2, $3)', [
    tenantId,
    userId,
    invitedBy,
  ]);
}

export async function findInvitation(
  q: Queryable,
  tenantId: string,
  userId: string,
): Promise<InvitationRow | undefined> {
  const { rows } = await q.query<InvitationRow>(
    'SELECT * FROM user_invitations WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, userId],
  );
  return rows[0];
}

export async function markAccepted(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const r = await q.query(
    'UPDATE user_invitations SET accepted_at = now() WHERE tenant_id = $1 AND user_id = $2 AND accepted_at IS NULL',
    [tenantId, userId],
  );
  return r.rowCount > 0;
}

export async function accountName(q: Queryable, tenantId: string): Promise<string> {
  const { rows } = await q.query<{ name: string }>(
    `SELECT name FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1`,
    [tenantId],
  );
  return rows[0]?.name ?? '';
}

/** The user's invitations not accepted yet, of one account when given. */
export async function pendingInvitations(q: Queryable, userId: string, tenantId?: string): Promise<InvitationRow[]> {
  const { rows } = await q.query<InvitationRow>(
    'SELECT * FROM user_invitations WHERE user_id = $1 AND accepted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2) ORDER BY created_at, tenant_id',
    [userId, tenantId ?? null],
  );
  return rows;
}

/**
 * The user's memberships waiting for their consent (`user_tenants.pending`), oldest first, with the account's name
 * and who invited (when an invitation says). Live accounts only.
 */
export async function pendingMemberships(q: Queryable, userId: string) {
  const { rows } = await q.query<{ tenant_id: string; name: string; invited_by: string | null; created_at: Date }>(
    `SELECT m.tenant_id, m.account_name AS name, ui.invited_by::text AS invited_by,
            coalesce(ui.created_at, m.created_at) AS created_at
       FROM (${userTablesSql.liveMemberships}) m
       LEFT JOIN user_invitations ui ON ui.tenant_id = m.tenant_id AND ui.user_id = m.user_id
      WHERE m.user_id = $1 AND m.pending
      ORDER BY m.created_at, m.tenant_id`,
    [userId],
  );
  return rows;
}

export type UserTenantStatus = 'PendingInvitation' | 'PendingLogin' | 'Activated' | 'NotActivated';

/**
 * Each user's status in each of their accounts (of `tenantId` only when given): NotActivated (membership disabled,
 * or signed up and not activated), PendingInvitation (invited, not accepted), PendingLogin (never signed in),
 * else Activated.
 */
export async function userTenantStatuses(
  q: Queryable,
  userIds: string[],
  tenantId?: string,
): Promise<{ user_id: string; tenant_id: string; status: UserTenantStatus }[]> {
  const { rows } = await q.query<{ user_id: string; tenant_id: string; status: UserTenantStatus }>(
    `SELECT m.user_id::text AS user_id, m.tenant_id,
            CASE WHEN m.is_disabled OR pa.user_id IS NOT NULL THEN 'NotActivated'
                 WHEN ui.user_id IS NOT NULL AND ui.accepted_at IS NULL THEN 'PendingInvitation'
                 WHEN u.last_login IS NULL THEN 'PendingLogin'
                 ELSE 'Activated' END AS status
     FROM (${userTablesSql.liveMemberships}) m
     JOIN (${userTablesSql.users}) u ON u.id = m.user_id
     LEFT JOIN (${signupTablesSql.pendingActivations}) pa ON pa.user_id = m.user_id
     LEFT JOIN user_invitations ui ON ui.tenant_id = m.tenant_id AND ui.user_id = m.user_id
     WHERE m.user_id::text = ANY($1::text[]) AND ($2::text IS NULL OR m.tenant_id = $2)
     ORDER BY m.user_id, m.created_at, m.tenant_id`,
    [userIds, tenantId ?? null],
  );
  return rows;
}
