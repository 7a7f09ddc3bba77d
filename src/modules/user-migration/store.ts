import type { Queryable } from '../../storage/db.ts';

/** SQL of the user migration: applications and their users, and the prefill of a provider migration. */

export interface ApplicationRow {
  id: string;
  name: string;
  app_url: string;
  login_url: string;
  is_default: boolean;
  auto_assign: boolean;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function listApplications(q: Queryable): Promise<ApplicationRow[]> {
  return (await q.query<ApplicationRow>('SELECT * FROM applications ORDER BY is_default DESC, created_at, id')).rows;
}

export async function findApplication(q: Queryable, id: string): Promise<ApplicationRow | undefined> {
  return (await q.query<ApplicationRow>('SELECT * FROM applications WHERE id = $1', [id])).rows[0];
}

export async function insertApplication(q: Queryable, a: Omit<ApplicationRow, 'created_at' | 'updated_at'>): Promise<ApplicationRow> {
  // Exactly one default: a new default takes the flag from the old one.
  if (a.is_default) await q.query('UPDATE applications SET is_default = false, updated_at = now() WHERE is_default');
  const { rows } = await q.query<ApplicationRow>(
    `INSERT INTO applications (id, name, app_url, login_url, is_default, auto_assign, is_active) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [a.id, a.name, a.app_url, a.login_url, a.is_default, a.auto_assign, a.is_active],
  );
  return rows[0];
}

/** Ids of the active default and auto-assign applications: where every migrated user goes. */
export async function autoApplicationIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM applications WHERE is_active AND (is_default OR auto_assign) ORDER BY id');
  return rows.map((r) => r.id);
}

export async function assignApplications(q: Queryable, tenantId: string, userId: string, appIds: string[]): Promise<void> {
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
     SELECT $1, ut.tenant_id, ut.user_id FROM user_tenants ut WHERE ut.tenant_id = $2 AND ut.user_id::text = ANY($3::text[])
     ON CONFLICT (app_id, tenant_id, user_id) DO UPDATE SET app_id = EXCLUDED.app_id
     RETURNING user_id::text, created_at`,
    [appId, tenantId, userIds],
  );
  return rows;
}

export async function unassignUsers(q: Queryable, appId: string, tenantId: string, userIds: string[]): Promise<void> {
  await q.query('DELETE FROM user_applications WHERE app_id = $1 AND tenant_id = $2 AND user_id::text = ANY($3::text[])', [appId, tenantId, userIds]);
}

export async function usersOfApplication(q: Queryable, appId: string): Promise<string[]> {
  const { rows } = await q.query<{ user_id: string }>('SELECT DISTINCT user_id::text FROM user_applications WHERE app_id = $1 ORDER BY 1', [appId]);
  return rows.map((r) => r.user_id);
}

export async function applicationsOfUser(q: Queryable, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ app_id: string }>('SELECT DISTINCT app_id::text FROM user_applications WHERE user_id::text = $1 ORDER BY 1', [userId]);
  return rows.map((r) => r.app_id);
}

/** A provider migration: the row exists (pending, no items) until the fetch job fills it. */
export async function insertEmptyUsersMigration(q: Queryable, id: string): Promise<void> {
  await q.query(`INSERT INTO migrations (id, kind, items, total) VALUES ($1, 'users', '[]'::jsonb, 0)`, [id]);
}

export async function fillMigration(q: Queryable, id: string, items: unknown[]): Promise<void> {
  await q.query(`UPDATE migrations SET items = $2::jsonb, total = $3 WHERE id = $1 AND kind = 'users' AND state = 'pending'`, [id, JSON.stringify(items), items.length]);
}

export async function failMigration(q: Queryable, id: string, reason: string): Promise<void> {
  await q.query(`UPDATE migrations SET state = 'failed', failure = $2, completed_at = now() WHERE id = $1 AND state IN ('pending', 'running')`, [id, reason]);
}

export async function migrationFailure(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ failure: string | null }>('SELECT failure FROM migrations WHERE id = $1', [id]);
  return rows[0]?.failure ?? null;
}

/** Roles by key that an account may hold (environment roles and its own), for provider role names. */
export async function roleIdsByKeys(q: Queryable, tenantId: string, keys: string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<{ id: string }>('SELECT id::text FROM roles WHERE key = ANY($2::text[]) AND (tenant_id IS NULL OR tenant_id = $1) ORDER BY id', [tenantId, keys]);
  return rows.map((r) => r.id);
}

// -- bulk import: set queries over one chunk, then one multi-row INSERT per table --

/** Live accounts among `tenantIds`, with what a new membership needs. */
export async function liveAccounts(q: Queryable, tenantIds: string[]): Promise<Map<string, { subAccess: boolean }>> {
  if (tenantIds.length === 0) return new Map();
  const { rows } = await q.query<{ tenant_id: string; sub_account_access_type: string }>(
    'SELECT tenant_id, sub_account_access_type FROM tenants WHERE tenant_id = ANY($1::text[]) AND deleted_at IS NULL',
    [tenantIds],
  );
  return new Map(rows.map((r) => [r.tenant_id, { subAccess: r.sub_account_access_type !== 'defaultOff' }]));
}

/** Which of the (lower-cased) emails a user already has. */
export async function takenEmails(q: Queryable, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const { rows } = await q.query<{ email: string }>('SELECT email FROM users WHERE email = ANY($1::text[])', [emails]);
  return new Set(rows.map((r) => r.email));
}

/** Each given username with its lower() (PostgreSQL's, as the unique index has it) and whether a user holds it. */
export async function usernames(q: Queryable, names: string[]): Promise<Map<string, { lower: string; taken: boolean }>> {
  if (names.length === 0) return new Map();
  const { rows } = await q.query<{ u: string; l: string; taken: boolean }>(
    `SELECT g.u, lower(g.u) AS l, EXISTS (SELECT 1 FROM users WHERE lower(username) = lower(g.u)) AS taken
     FROM unnest($1::text[]) AS g(u)`,
    [names],
  );
  return new Map(rows.map((r) => [r.u, { lower: r.l, taken: r.taken }]));
}

export async function takenPhones(q: Queryable, phones: string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  const { rows } = await q.query<{ phone_number: string }>('SELECT phone_number FROM user_phone_numbers WHERE phone_number = ANY($1::text[])', [phones]);
  return new Set(rows.map((r) => r.phone_number));
}

export interface NewMigratedUser {
  id: string;
  email: string;
  username: string | null;
  name: string;
  profile_picture_url: string | null;
  verified: boolean;
  provider: string;
  metadata: Record<string, unknown>;
  vendor_metadata: Record<string, unknown>;
  password_hash: string | null;
  must_reset_password: boolean;
  mfa_enrolled: boolean;
  authenticator_mfa_secret_enc: string | null;
  phone_number_type: string | null;
  active_tenant_id: string;
  /** Not a users column: the membership and the phone. */
  sub_access: boolean;
  phone: string | null;
  role_ids: string[];
}

/**
 * The default role ids of each account in `tenantIds` (the environment's and the account's own), as
 * roles' `defaultRoleIds` gives them for one account; one query for the chunk.
 */
export async function defaultRoleIdsOf(q: Queryable, tenantIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(tenantIds.map((t) => [t, []]));
  if (tenantIds.length === 0) return out;
  const { rows } = await q.query<{ t: string; id: string }>(
    `SELECT a.t, r.id::text FROM unnest($1::text[]) AS a(t) JOIN roles r ON (r.tenant_id IS NULL OR r.tenant_id = a.t) AND r.is_default
     ORDER BY a.t, r.level, r.key, r.tenant_id NULLS FIRST`,
    [tenantIds],
  );
  for (const r of rows) out.get(r.t)!.push(r.id);
  return out;
}

/**
 * The users of one chunk, already checked (new ids, distinct role and application ids, so no conflict handling): one INSERT per table (users, phones, memberships, role assignments,
 * applications), each a jsonb_to_recordset over the whole chunk. A unique violation means a concurrent writer took an
 * email, username or phone after the checks; the caller handles it.
 */
export async function insertMigratedUsers(q: Queryable, users: NewMigratedUser[], appIds: string[]): Promise<void> {
  if (users.length === 0) return;
  await q.query(
    `INSERT INTO users (id, email, username, name, profile_picture_url, verified, provider, metadata, vendor_metadata, password_hash,
                        must_reset_password, mfa_enrolled, authenticator_mfa_secret_enc, phone_number_type, active_tenant_id)
     SELECT id, email, username, name, profile_picture_url, verified, provider, metadata, vendor_metadata, password_hash,
            must_reset_password, mfa_enrolled, authenticator_mfa_secret_enc, phone_number_type, active_tenant_id
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, email text, username text, name text, profile_picture_url text, verified boolean,
          provider text, metadata jsonb, vendor_metadata jsonb, password_hash text, must_reset_password boolean, mfa_enrolled boolean,
          authenticator_mfa_secret_enc text, phone_number_type text, active_tenant_id text)`,
    [JSON.stringify(users.map(({ sub_access: _s, phone: _p, role_ids: _r, ...u }) => u))],
  );
  const phones = users.filter((u) => u.phone !== null);
  if (phones.length) {
    // A new user holds no phone yet: each one is the primary.
    await q.query(
      `INSERT INTO user_phone_numbers (phone_number, user_id, is_primary) SELECT p, u, true FROM jsonb_to_recordset($1::jsonb) AS x(p text, u uuid)`,
      [JSON.stringify(phones.map((u) => ({ p: u.phone, u: u.id })))],
    );
  }
  const members = JSON.stringify(users.map((u) => ({ t: u.active_tenant_id, u: u.id, s: u.sub_access })));
  await q.query(
    `INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, temporary_expiration_date)
     SELECT t, u, s, NULL FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid, s boolean)`,
    [members],
  );
  const roles = users.flatMap((u) => u.role_ids.map((r) => ({ t: u.active_tenant_id, u: u.id, r })));
  if (roles.length) {
    await q.query(
      `INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT t, u, r FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid, r uuid)`,
      [JSON.stringify(roles)],
    );
  }
  if (appIds.length) {
    await q.query(
      `INSERT INTO user_applications (app_id, tenant_id, user_id)
       SELECT a, x.t, x.u FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid), unnest($2::uuid[]) AS a`,
      [members, appIds],
    );
  }
}
