import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql } from '../tenants/index.ts';
import { userTablesSql } from '../users/index.ts';
import type { ApplicationRow } from './store.ts';

/** SQL of application management: update and delete, account assignments, active accounts, multi-id lookups. */

type Writable = Partial<Omit<ApplicationRow, 'id' | 'created_at' | 'updated_at' | 'vendor_id'>>;
const COLUMNS: (keyof Writable)[] = [
  'name',
  'app_url',
  'login_url',
  'logo_url',
  'access_type',
  'app_type',
  'frontend_stack',
  'is_default',
  'auto_assign',
  'is_active',
  'description',
  'metadata',
  'app_host',
  'allow_dcr',
  'redirect_uris',
  'is_first_party',
];

/** Locks the application row (and answers whether it is the default) for a change. */
export async function lockApplication(q: Queryable, id: string): Promise<{ is_default: boolean } | undefined> {
  return (await q.query<{ is_default: boolean }>('SELECT is_default FROM applications WHERE id = $1 FOR UPDATE', [id]))
    .rows[0];
}

export async function updateApplication(q: Queryable, id: string, set: Writable): Promise<void> {
  const cols = COLUMNS.filter((c) => set[c] !== undefined);
  // Exactly one default: becoming the default takes the flag from the old one.
  if (set.is_default)
    await q.query('UPDATE applications SET is_default = false, updated_at = now() WHERE is_default AND id <> $1', [id]);
  const assignments = cols.map((c, i) => `${c} = $${i + 2}${c === 'metadata' ? '::jsonb' : ''}`);
  const values = cols.map((c) => (c === 'metadata' ? JSON.stringify(set[c]) : set[c]));
  await q.query(`UPDATE applications SET ${[...assignments, 'updated_at = now()'].join(', ')} WHERE id = $1`, [
    id,
    ...values,
  ]);
}

/** Deletes an application; its user and account assignments, credentials, clients and active accounts go with it (FKs). */
export async function deleteApplication(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM applications WHERE id = $1', [id]);
}

export interface AssignmentRow {
  app_id: string;
  tenant_id: string;
  access_type: 'FREE_ACCESS' | 'MANAGED_ACCESS';
  created_at: Date;
  updated_at: Date;
}

export interface AssignmentFilter {
  appIds?: string[];
  tenantIds?: string[];
  accessType?: string;
}

/** Assignments of live accounts, by account then application. */
export async function listAssignments(q: Queryable, f: AssignmentFilter): Promise<AssignmentRow[]> {
  const { rows } = await q.query<AssignmentRow>(
    `SELECT x.app_id::text, x.tenant_id, x.access_type, x.created_at, x.updated_at
     FROM application_tenants x JOIN (${accountTablesSql.liveAccounts}) t ON t.tenant_id = x.tenant_id
     WHERE ($1::text[] IS NULL OR x.app_id::text = ANY($1::text[])) AND ($2::text[] IS NULL OR x.tenant_id = ANY($2::text[]))
       AND ($3::text IS NULL OR x.access_type = $3)
     ORDER BY x.tenant_id, x.app_id`,
    [f.appIds ?? null, f.tenantIds ?? null, f.accessType ?? null],
  );
  return rows;
}

/** Assigns (or, with an access type, re-types) an account; answers the assignment. */
export async function upsertAssignment(
  q: Queryable,
  appId: string,
  tenantId: string,
  accessType: string | null,
  fallback: string,
): Promise<AssignmentRow> {
  const { rows } = await q.query<AssignmentRow>(
    `INSERT INTO application_tenants (app_id, tenant_id, access_type) VALUES ($1, $2, coalesce($3, $4))
     ON CONFLICT (app_id, tenant_id) DO UPDATE SET access_type = coalesce($3, application_tenants.access_type),
       updated_at = CASE WHEN $3::text IS NULL THEN application_tenants.updated_at ELSE now() END
     RETURNING app_id::text, tenant_id, access_type, created_at, updated_at`,
    [appId, tenantId, accessType, fallback],
  );
  return rows[0];
}

export async function setAssignmentAccess(
  q: Queryable,
  appId: string,
  tenantId: string,
  accessType: string,
): Promise<AssignmentRow | undefined> {
  const { rows } = await q.query<AssignmentRow>(
    `UPDATE application_tenants SET access_type = $3, updated_at = now() WHERE app_id = $1 AND tenant_id = $2
     RETURNING app_id::text, tenant_id, access_type, created_at, updated_at`,
    [appId, tenantId, accessType],
  );
  return rows[0];
}

export async function deleteAssignment(q: Queryable, appId: string, tenantId: string): Promise<boolean> {
  return (
    (await q.query('DELETE FROM application_tenants WHERE app_id = $1 AND tenant_id = $2', [appId, tenantId]))
      .rowCount > 0
  );
}

export async function isAssigned(q: Queryable, appId: string, tenantId: string): Promise<boolean> {
  return (
    (await q.query('SELECT 1 FROM application_tenants WHERE app_id = $1 AND tenant_id = $2', [appId, tenantId])).rows
      .length > 0
  );
}

/** The user's memberships among `tenantIds`. */
export async function memberships(q: Queryable, userId: string, tenantIds: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ tenant_id: string }>(
    `SELECT m.tenant_id FROM (${userTablesSql.memberships}) m WHERE m.user_id = $1 AND m.tenant_id = ANY($2::text[])`,
    [userId, tenantIds],
  );
  return new Set(rows.map((r) => r.tenant_id));
}

export async function userExists(q: Queryable, userId: string): Promise<boolean> {
  return (await q.query(`SELECT 1 FROM (${userTablesSql.users}) u WHERE u.id = $1`, [userId])).rows.length > 0;
}

export async function activeTenants(q: Queryable, userId: string): Promise<{ app_id: string; tenant_id: string }[]> {
  const { rows } = await q.query<{ app_id: string; tenant_id: string }>(
    'SELECT app_id::text, tenant_id FROM user_application_active_tenants WHERE user_id = $1 ORDER BY app_id',
    [userId],
  );
  return rows;
}

export async function setActiveTenants(
  q: Queryable,
  userId: string,
  pairs: { appId: string; tenantId: string }[],
): Promise<void> {
  await q.query(
    `INSERT INTO user_application_active_tenants (user_id, app_id, tenant_id)
     SELECT $1, p.app_id, p.tenant_id FROM unnest($2::uuid[], $3::text[]) AS p (app_id, tenant_id)
     ON CONFLICT (user_id, app_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, updated_at = now()`,
    [userId, pairs.map((p) => p.appId), pairs.map((p) => p.tenantId)],
  );
}

/** Applications among `ids` that exist, with their access type. */
export async function applicationsByIds(q: Queryable, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await q.query<{ id: string; access_type: string }>(
    'SELECT id::text, access_type FROM applications WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.access_type]));
}

/** User ids per application (every asked id that exists is answered, with an empty list when it has none). */
export async function usersOfApplications(
  q: Queryable,
  appIds: string[],
): Promise<{ app_id: string; user_ids: string[] }[]> {
  const { rows } = await q.query<{ app_id: string; user_ids: string[] }>(
    `SELECT a.id::text AS app_id, ARRAY(SELECT DISTINCT ua.user_id::text FROM user_applications ua WHERE ua.app_id = a.id ORDER BY 1) AS user_ids
     FROM applications a WHERE a.id = ANY($1::uuid[]) ORDER BY a.created_at, a.id`,
    [appIds],
  );
  return rows;
}

/** Application ids per user (users that exist; an empty list when they have none). */
export async function applicationsOfUsers(
  q: Queryable,
  userIds: string[],
): Promise<{ user_id: string; app_ids: string[] }[]> {
  const { rows } = await q.query<{ user_id: string; app_ids: string[] }>(
    `SELECT u.id::text AS user_id, ARRAY(SELECT DISTINCT ua.app_id::text FROM user_applications ua WHERE ua.user_id = u.id ORDER BY 1) AS app_ids
     FROM (${userTablesSql.users}) u WHERE u.id = ANY($1::uuid[]) ORDER BY u.id`,
    [userIds],
  );
  return rows;
}
