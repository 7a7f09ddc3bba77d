import type { Queryable } from '../../storage/db.ts';
import { environmentIdSql } from '../environment/index.ts';
import { userTablesSql } from '../users/index.ts';

/** SQL of the user migration: applications and their users. */

export interface ApplicationRow {
  id: string;
  name: string;
  app_url: string;
  login_url: string;
  logo_url: string;
  access_type: 'FREE_ACCESS' | 'MANAGED_ACCESS';
  app_type: string;
  frontend_stack: string | null;
  is_default: boolean;
  auto_assign: boolean;
  is_active: boolean;
  description: string;
  metadata: Record<string, unknown>;
  app_host: string;
  allow_dcr: boolean;
  /** OpenID client: its redirect URIs (exact match) and whether it is first-party (no consent page). */
  redirect_uris: string[];
  is_first_party: boolean;
  created_at: Date;
  updated_at: Date;
  /** The environment's id (its single `environment` row), answered as `vendorId`. */
  vendor_id: string;
}

/** Filters of the application list; each one unset matches every application. */
export interface ApplicationFilter {
  accessType?: string;
  isDefault?: boolean;
  isActive?: boolean;
  ids?: string[];
  type?: string;
}

const SELECT_APPLICATION = `SELECT a.*, ${environmentIdSql} AS vendor_id FROM applications a`;

export async function listApplications(q: Queryable, f: ApplicationFilter = {}): Promise<ApplicationRow[]> {
  const { rows } = await q.query<ApplicationRow>(
    `${SELECT_APPLICATION}
     WHERE ($1::text IS NULL OR a.access_type = $1) AND ($2::boolean IS NULL OR a.is_default = $2) AND ($3::boolean IS NULL OR a.is_active = $3)
       AND ($4::text[] IS NULL OR a.id::text = ANY($4::text[])) AND ($5::text IS NULL OR a.app_type = $5)
     ORDER BY a.is_default DESC, a.created_at, a.id`,
    [f.accessType ?? null, f.isDefault ?? null, f.isActive ?? null, f.ids ?? null, f.type ?? null],
  );
  return rows;
}

export async function findApplication(q: Queryable, id: string): Promise<ApplicationRow | undefined> {
  return (await q.query<ApplicationRow>(`${SELECT_APPLICATION} WHERE a.id = $1`, [id])).rows[0];
}

export async function insertApplication(
  q: Queryable,
  a: Omit<ApplicationRow, 'created_at' | 'updated_at' | 'vendor_id'>,
): Promise<ApplicationRow> {
  // Exactly one default: a new default takes the flag from the old one.
  if (a.is_default) await q.query('UPDATE applications SET is_default = false, updated_at = now() WHERE is_default');
  const { rows } = await q.query<ApplicationRow>(
    `INSERT INTO applications (id, name, app_url, login_url, logo_url, access_type, app_type, frontend_stack, is_default, auto_assign, is_active, description, metadata, app_host, allow_dcr, redirect_uris, is_first_party)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16::text[], $17)
     RETURNING *, ${environmentIdSql} AS vendor_id`,
    [
      a.id,
      a.name,
      a.app_url,
      a.login_url,
      a.logo_url,
      a.access_type,
      a.app_type,
      a.frontend_stack,
      a.is_default,
      a.auto_assign,
      a.is_active,
      a.description,
      JSON.stringify(a.metadata),
      a.app_host,
      a.allow_dcr,
      a.redirect_uris,
      a.is_first_party,
    ],
  );
  return rows[0];
}

/** Ids of the active default and auto-assign applications: where every migrated user goes. */
export async function autoApplicationIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    'SELECT id FROM applications WHERE is_active AND (is_default OR auto_assign) ORDER BY id',
  );
  return rows.map((r) => r.id);
}

export async function assignApplications(
  q: Queryable,
  tenantId: string,
  userId: string,
  appIds: string[],
): Promise<void> {
  if (appIds.length === 0) return;
  await q.query(
    `INSERT INTO user_applications (app_id, tenant_id, user_id) SELECT unnest($3::uuid[]), $1, $2 ON CONFLICT DO NOTHING`,
    [tenantId, userId, appIds],
  );
}

/** Assigns members of `tenantId` to an application; answers the rows for the users that are members. */
export async function assignUsers(q: Queryable, appId: string, tenantId: string, userIds: string[]) {
  const { rows } = await q.query<{ user_id: string; created_at: Date }>(
    `INSERT INTO user_applications (app_id, tenant_id, user_id)
     SELECT $1, ut.tenant_id, ut.user_id FROM (${userTablesSql.memberships}) ut
      WHERE ut.tenant_id = $2 AND ut.user_id::text = ANY($3::text[])
     ON CONFLICT (app_id, tenant_id, user_id) DO UPDATE SET app_id = EXCLUDED.app_id
     RETURNING user_id::text, created_at`,
    [appId, tenantId, userIds],
  );
  return rows;
}

export async function unassignUsers(q: Queryable, appId: string, tenantId: string, userIds: string[]): Promise<void> {
  await q.query(
    'DELETE FROM user_applications WHERE app_id = $1 AND tenant_id = $2 AND user_id::text = ANY($3::text[])',
    [appId, tenantId, userIds],
  );
}

export async function usersOfApplication(q: Queryable, appId: string): Promise<string[]> {
  const { rows } = await q.query<{ user_id: string }>(
    'SELECT DISTINCT user_id::text FROM user_applications WHERE app_id = $1 ORDER BY 1',
    [appId],
  );
  return rows.map((r) => r.user_id);
}

export async function applicationsOfUser(q: Queryable, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ app_id: string }>(
    'SELECT DISTINCT app_id::text FROM user_applications WHERE user_id::text = $1 ORDER BY 1',
    [userId],
  );
  return rows.map((r) => r.app_id);
}
