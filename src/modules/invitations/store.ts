import type { Queryable } from '../../storage/db.ts';

export interface InvitationRow {
  tenant_id: string;
  user_id: string;
  invited_by: string | null;
  created_at: Date;
  accepted_at: Date | null;
}

export async function insertInvitation(q: Queryable, tenantId: string, userId: string, invitedBy: string | null): Promise<void> {
  await q.query('INSERT INTO user_invitations (tenant_id, user_id, invited_by) VALUES ($1, $2, $3)', [tenantId, userId, invitedBy]);
}

export async function findInvitation(q: Queryable, tenantId: string, userId: string): Promise<InvitationRow | undefined> {
  const { rows } = await q.query<InvitationRow>('SELECT * FROM user_invitations WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
  return rows[0];
}

export async function markAccepted(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const r = await q.query('UPDATE user_invitations SET accepted_at = now() WHERE tenant_id = $1 AND user_id = $2 AND accepted_at IS NULL', [tenantId, userId]);
  return r.rowCount > 0;
}

export async function accountName(q: Queryable, tenantId: string): Promise<string> {
  const { rows } = await q.query<{ name: string }>('SELECT name FROM tenants WHERE tenant_id = $1', [tenantId]);
  return rows[0]?.name ?? '';
}
