import type { Queryable } from '../../storage/db.ts';

export interface GroupRoleMapping {
  group: string;
  roleIds: string[];
}

export interface ConnectionRow {
  tenant_id: string;
  id: string;
  connection_name: string;
  source: string;
  sync_to_user_management: boolean;
  metadata: Record<string, unknown>;
  token_hash: string;
  group_roles: GroupRoleMapping[];
  last_sync: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function insert(
  q: Queryable,
  r: Pick<
    ConnectionRow,
    'tenant_id' | 'id' | 'connection_name' | 'source' | 'sync_to_user_management' | 'metadata' | 'token_hash'
  >,
): Promise<ConnectionRow> {
  const { rows } = await q.query<ConnectionRow>(
    `INSERT INTO scim_connections (tenant_id, id, connection_name, source, sync_to_user_management, metadata, token_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [
      r.tenant_id,
      r.id,
      r.connection_name,
      r.source,
      r.sync_to_user_management,
      JSON.stringify(r.metadata),
      r.token_hash,
    ],
  );
  return rows[0];
}

export async function get(
  q: Queryable,
  tenantId: string,
  id: string,
  lock = false,
): Promise<ConnectionRow | undefined> {
  const { rows } = await q.query<ConnectionRow>(
    `SELECT * FROM scim_connections WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, id],
  );
  return rows[0];
}

/** By id alone: the SCIM routes carry only the connection id (the token then proves the caller). */
export async function getById(q: Queryable, id: string): Promise<ConnectionRow | undefined> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM scim_connections WHERE id = $1', [id]);
  return rows[0];
}

/**
 * The connection a SCIM write acts for, read in the write's transaction (fresh settings, the current token hash).
 * FOR KEY SHARE (the lock the foreign keys of scim_users take anyway): it waits for a PATCH that holds the row FOR
 * UPDATE and then sees that PATCH's settings, so no write commits under settings older than a committed switch.
 */
export async function getForWrite(q: Queryable, tenantId: string, id: string): Promise<ConnectionRow | undefined> {
  const { rows } = await q.query<ConnectionRow>(
    'SELECT * FROM scim_connections WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE',
    [tenantId, id],
  );
  return rows[0];
}

export const SYNC_JOB = 'scim.sync-users';

export async function list(
  q: Queryable,
  f: { tenantId?: string; source?: string; connectionName?: string; id?: string },
): Promise<ConnectionRow[]> {
  const conds: string[] = [];
  const params: unknown[] = [];
  if (f.tenantId !== undefined) conds.push(`tenant_id = $${params.push(f.tenantId)}`);
  if (f.source !== undefined) conds.push(`source = $${params.push(f.source)}`);
  if (f.connectionName !== undefined) conds.push(`connection_name = $${params.push(f.connectionName)}`);
  if (f.id !== undefined) conds.push(`id::text = $${params.push(f.id)}`);
  const { rows } = await q.query<ConnectionRow>(
    `SELECT * FROM scim_connections${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''} ORDER BY created_at, id LIMIT 1000`,
    params,
  );
  return rows;
}

export async function update(
  q: Queryable,
  tenantId: string,
  id: string,
  values: Partial<
    Pick<ConnectionRow, 'sync_to_user_management' | 'metadata' | 'token_hash' | 'connection_name' | 'group_roles'>
  >,
): Promise<void> {
  const cols = Object.keys(values) as (keyof typeof values)[];
  if (cols.length === 0) return;
  await q.query(
    `UPDATE scim_connections SET ${cols.map((c, i) => `${c} = $${i + 3}`).join(', ')}, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
    [
      tenantId,
      id,
      ...cols.map((c) => (c === 'metadata' || c === 'group_roles' ? JSON.stringify(values[c]) : values[c])),
    ],
  );
}

/**
 * Moves lastSync to now unless a call that ended after `since` already did: concurrent provisioning calls then skip
 * the row instead of queueing on its lock, and lastSync still counts every call that started before it.
 */
export async function touch(q: Queryable, id: string, since: Date): Promise<void> {
  await q.query(
    'UPDATE scim_connections SET last_sync = now() WHERE id = $1 AND (last_sync IS NULL OR last_sync < $2)',
    [id, since],
  );
}

export async function remove(q: Queryable, tenantId: string, id: string): Promise<void> {
  await q.query('DELETE FROM scim_connections WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
}

export async function removeAccount(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM scim_connections WHERE tenant_id = $1', [tenantId]);
}
