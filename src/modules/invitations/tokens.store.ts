import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';

/** A row of `tenant_invite_tokens` (0022). */
export interface InviteTokenRow {
  tenant_id: string;
  id: string;
  user_id: string | null;
  token_hash: string;
  token_enc: string;
  role_ids: string[];
  should_send_email: boolean;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

export async function insert(
  q: Queryable,
  r: Omit<InviteTokenRow, 'created_at' | 'updated_at'>,
): Promise<InviteTokenRow> {
  const { rows } = await q.query<InviteTokenRow>(
    `INSERT INTO tenant_invite_tokens (tenant_id, id, user_id, token_hash, token_enc, role_ids, should_send_email, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8) RETURNING *`,
    [r.tenant_id, r.id, r.user_id, r.token_hash, r.token_enc, r.role_ids, r.should_send_email, r.expires_at],
  );
  return rows[0];
}

export async function ofOwner(
  q: Queryable,
  tenantId: string,
  userId: string,
  lock = false,
): Promise<InviteTokenRow | undefined> {
  const { rows } = await q.query<InviteTokenRow>(
    `SELECT * FROM tenant_invite_tokens WHERE tenant_id = $1 AND user_id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, userId],
  );
  return rows[0];
}

export async function byHash(q: Queryable, hash: string): Promise<InviteTokenRow | undefined> {
  const { rows } = await q.query<InviteTokenRow>('SELECT * FROM tenant_invite_tokens WHERE token_hash = $1', [hash]);
  return rows[0];
}

/** Every invite token, of one account when given, oldest first. */
export async function all(q: Queryable, tenantId?: string): Promise<InviteTokenRow[]> {
  const { rows } = await q.query<InviteTokenRow>(
    'SELECT * FROM tenant_invite_tokens WHERE ($1::text IS NULL OR tenant_id = $1) ORDER BY created_at, id',
    [tenantId ?? null],
  );
  return rows;
}

export async function update(
  q: Queryable,
  tenantId: string,
  id: string,
  v: { expires_at?: Date; should_send_email?: boolean },
): Promise<InviteTokenRow> {
  const { rows } = await q.query<InviteTokenRow>(
    `UPDATE tenant_invite_tokens SET expires_at = coalesce($3, expires_at), should_send_email = coalesce($4, should_send_email), updated_at = now()
     WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    [tenantId, id, v.expires_at ?? null, v.should_send_email ?? null],
  );
  return rows[0];
}

export async function remove(q: Queryable, tenantId: string | undefined, id: string): Promise<boolean> {
  const r = await q.query('DELETE FROM tenant_invite_tokens WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)', [
    id,
    tenantId ?? null,
  ]);
  return r.rowCount > 0;
}

export async function removeOfOwner(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const r = await q.query('DELETE FROM tenant_invite_tokens WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
  return r.rowCount > 0;
}

export async function removeOfAccount(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM tenant_invite_tokens WHERE tenant_id = $1', [tenantId]);
}

/** Whether the account exists and is not removed. */
export async function accountLive(q: Queryable, tenantId: string): Promise<{ name: string } | undefined> {
  const { rows } = await q.query<{ name: string }>(
    `SELECT name FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1 AND deleted_at IS NULL`,
    [tenantId],
  );
  return rows[0];
}
