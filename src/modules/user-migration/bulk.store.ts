import type { Queryable } from '../../storage/db.ts';

/**
 * SQL of the bulk import, per chunk of a job: one statement reads everything the checks need, one statement writes
 * every accepted user (users, phones, memberships, role assignments, applications). Round trips, not rows, are what
 * a chunk costs beyond the raw inserts, so each is one.
 */

/** What the checks of one chunk need, read in one statement. */
export interface ChunkFacts {
  /** Live accounts among the tenant ids: whether a new membership may see sub-accounts. */
  accounts: Map<string, { subAccess: boolean }>;
  /** The (lower-cased) emails some user already has. */
  emails: Set<string>;
  /** Each given username with its lower() (PostgreSQL's, as the unique index has it) and whether a user holds it. */
  usernames: Map<string, { lower: string; taken: boolean }>;
  /** The phone numbers some user already holds. */
  phones: Set<string>;
  /** The default role ids of each account (the environment's and its own), as roles' `defaultRoleIds` orders them. */
  defaults: Map<string, string[]>;
  /** Active default and auto-assign applications: where every migrated user goes. */
  appIds: string[];
}

export async function chunkFacts(q: Queryable, ask: { tenantIds: string[]; emails: string[]; usernames: string[]; phones: string[] }): Promise<ChunkFacts> {
  const { rows } = await q.query<{ accounts: Record<string, boolean>; emails: string[]; names: [string, string, boolean][]; phones: string[]; defaults: [string, string][]; apps: string[] }>(
    `SELECT
       (SELECT coalesce(jsonb_object_agg(t.tenant_id, t.sub_account_access_type <> 'defaultOff'), '{}'::jsonb)
          FROM tenants t WHERE t.tenant_id = ANY($1::text[]) AND t.deleted_at IS NULL) AS accounts,
       (SELECT coalesce(jsonb_agg(u.email), '[]'::jsonb) FROM users u WHERE u.email = ANY($2::text[])) AS emails,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(g.u, lower(g.u), EXISTS (SELECT 1 FROM users WHERE lower(username) = lower(g.u)))), '[]'::jsonb)
          FROM unnest($3::text[]) AS g(u)) AS names,
       (SELECT coalesce(jsonb_agg(p.phone_number), '[]'::jsonb) FROM user_phone_numbers p WHERE p.phone_number = ANY($4::text[])) AS phones,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(a.t, r.id) ORDER BY a.t, r.level, r.key, r.tenant_id NULLS FIRST), '[]'::jsonb)
          FROM unnest($1::text[]) AS a(t) JOIN roles r ON (r.tenant_id IS NULL OR r.tenant_id = a.t) AND r.is_default) AS defaults,
       (SELECT coalesce(jsonb_agg(a.id ORDER BY a.id), '[]'::jsonb) FROM applications a WHERE a.is_active AND (a.is_default OR a.auto_assign)) AS apps`,
    [ask.tenantIds, ask.emails, ask.usernames, ask.phones],
  );
  const r = rows[0];
  const defaults = new Map<string, string[]>(ask.tenantIds.map((t) => [t, []]));
  for (const [t, id] of r.defaults) defaults.get(t)!.push(id);
  return {
    accounts: new Map(Object.entries(r.accounts).map(([t, subAccess]) => [t, { subAccess }])),
    emails: new Set(r.emails),
    usernames: new Map(r.names.map(([u, lower, taken]) => [u, { lower, taken }])),
    phones: new Set(r.phones),
    defaults,
    appIds: r.apps,
  };
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
  /** Not users columns: the membership, the phone and the role assignments. */
  sub_access: boolean;
  phone: string | null;
  role_ids: string[];
}

/**
 * The users of one chunk, already checked (new ids, distinct role and application ids, so no conflict handling), in
 * ONE statement: the chunk is read once (jsonb_to_recordset) and each table is a data-modifying CTE over it. The
 * foreign keys between them (membership → user, role assignment and application → membership) are checked at the
 * end of the statement, when every row exists. A unique violation means a concurrent writer took an email, username
 * or phone after the checks; the caller handles it.
 */
export async function insertMigratedUsers(q: Queryable, users: NewMigratedUser[], appIds: string[]): Promise<void> {
  if (users.length === 0) return;
  await q.query(
    `WITH x AS MATERIALIZED (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, email text, username text, name text, profile_picture_url text, verified boolean,
         provider text, metadata jsonb, vendor_metadata jsonb, password_hash text, must_reset_password boolean, mfa_enrolled boolean,
         authenticator_mfa_secret_enc text, phone_number_type text, active_tenant_id text, sub_access boolean, phone text, role_ids jsonb)
     ), u AS (
       INSERT INTO users (id, email, username, name, profile_picture_url, verified, provider, metadata, vendor_metadata, password_hash,
                          must_reset_password, mfa_enrolled, authenticator_mfa_secret_enc, phone_number_type, active_tenant_id)
       SELECT id, email, username, name, profile_picture_url, verified, provider, metadata, vendor_metadata, password_hash,
              must_reset_password, mfa_enrolled, authenticator_mfa_secret_enc, phone_number_type, active_tenant_id FROM x
     ), p AS (
       -- A new user holds no phone yet: each one is the primary.
       INSERT INTO user_phone_numbers (phone_number, user_id, is_primary) SELECT phone, id, true FROM x WHERE phone IS NOT NULL
     ), m AS (
       INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, temporary_expiration_date)
       SELECT active_tenant_id, id, sub_access, NULL FROM x
     ), r AS (
       INSERT INTO user_roles (tenant_id, user_id, role_id)
       SELECT x.active_tenant_id, x.id, r.v::uuid FROM x, jsonb_array_elements_text(x.role_ids) AS r(v)
     )
     INSERT INTO user_applications (app_id, tenant_id, user_id) SELECT a, x.active_tenant_id, x.id FROM x, unnest($2::uuid[]) AS a`,
    [JSON.stringify(users), appIds],
  );
}
