import type { Queryable } from '../../storage/db.ts';

export interface BulkTaskRow {
  id: string;
  kind: 'invite' | 'roles';
  tenant_id: string | null;
  user_id: string | null;
  status: 'pending' | 'running' | 'completed' | 'failed';
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  details: Record<string, unknown>;
  errors: Record<string, unknown>[];
  created_at: Date;
  completed_at: Date | null;
}

export async function insertTask(
  q: Queryable,
  t: Omit<BulkTaskRow, 'created_at' | 'completed_at'> & { createdAt: Date },
): Promise<BulkTaskRow> {
  const { rows } = await q.query<BulkTaskRow>(
    `INSERT INTO user_bulk_tasks (id, kind, tenant_id, user_id, status, total, processed, succeeded, failed, details, errors, created_at, completed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $5 IN ('completed', 'failed') THEN now() END) RETURNING *`,
    [
      t.id,
      t.kind,
      t.tenant_id,
      t.user_id,
      t.status,
      t.total,
      t.processed,
      t.succeeded,
      t.failed,
      JSON.stringify(t.details),
      JSON.stringify(t.errors),
      t.createdAt,
    ],
  );
  return rows[0];
}

export async function findTask(q: Queryable, id: string, kind: BulkTaskRow['kind']): Promise<BulkTaskRow | undefined> {
  const { rows } = await q.query<BulkTaskRow>('SELECT * FROM user_bulk_tasks WHERE id = $1 AND kind = $2', [id, kind]);
  return rows[0];
}

/** Memberships of `srcTenantId` copied to `targetTenantId` (state kept, sub-account access per the target); the users newly added. */
export async function copyMemberships(
  q: Queryable,
  srcTenantId: string,
  targetTenantId: string,
  subAccess: boolean,
): Promise<string[]> {
  const { rows } = await q.query<{ user_id: string }>(
    `INSERT INTO user_tenants (tenant_id, user_id, is_disabled, temporary_expiration_date, sub_account_access_allowed, pending)
     SELECT $2, user_id, is_disabled, temporary_expiration_date, $3, pending FROM user_tenants WHERE tenant_id = $1
     ON CONFLICT DO NOTHING RETURNING user_id`,
    [srcTenantId, targetTenantId, subAccess],
  );
  return rows.map((r) => r.user_id);
}

/** The role ids the members of an account hold there, each once. */
export async function roleIdsInAccount(q: Queryable, tenantId: string): Promise<string[]> {
  const { rows } = await q.query<{ role_id: string }>(
    'SELECT DISTINCT role_id::text AS role_id FROM user_roles WHERE tenant_id = $1',
    [tenantId],
  );
  return rows.map((r) => r.role_id);
}

/** Gives the users of `userIds` in `targetTenantId` the roles of `roleIds` they hold in `srcTenantId`. */
export async function copyRoles(
  q: Queryable,
  srcTenantId: string,
  targetTenantId: string,
  userIds: string[],
  roleIds: string[],
): Promise<void> {
  if (userIds.length === 0 || roleIds.length === 0) return;
  await q.query(
    `INSERT INTO user_roles (tenant_id, user_id, role_id)
     SELECT $2, user_id, role_id FROM user_roles WHERE tenant_id = $1 AND user_id = ANY($3::uuid[]) AND role_id = ANY($4::uuid[])
     ON CONFLICT DO NOTHING`,
    [srcTenantId, targetTenantId, userIds, roleIds],
  );
}

/** Of `userIds`, those with no role in the account. */
export async function withoutRoles(q: Queryable, tenantId: string, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    'SELECT id::text AS id FROM unnest($2::uuid[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM user_roles ur WHERE ur.tenant_id = $1 AND ur.user_id = x.id)',
    [tenantId, userIds],
  );
  return rows.map((r) => r.id);
}

/** Gives each of `userIds` the roles of `roleIds` in the account. */
export async function addRolesToUsers(
  q: Queryable,
  tenantId: string,
  userIds: string[],
  roleIds: string[],
): Promise<void> {
  if (userIds.length === 0 || roleIds.length === 0) return;
  await q.query(
    'INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT $1, u, r FROM unnest($2::uuid[]) AS u CROSS JOIN unnest($3::uuid[]) AS r ON CONFLICT DO NOTHING',
    [tenantId, userIds, roleIds],
  );
}

/** Removes every membership of the account; the members (id, email) that left, and whose active account it was moves on. */
export async function removeAllMembers(
  q: Queryable,
  tenantId: string,
  nextTenantId: string,
): Promise<{ user_id: string; email: string }[]> {
  const { rows } = await q.query<{ user_id: string; email: string }>(
    `WITH gone AS (DELETE FROM user_tenants WHERE tenant_id = $1 RETURNING user_id)
     SELECT g.user_id::text AS user_id, u.email FROM gone g JOIN users u ON u.id = g.user_id ORDER BY u.email, g.user_id`,
    [tenantId],
  );
  await q.query(
    'UPDATE users SET active_tenant_id = $2, updated_at = now() WHERE active_tenant_id = $1 AND id = ANY($3::uuid[])',
    [tenantId, nextTenantId, rows.map((r) => r.user_id)],
  );
  return rows;
}
