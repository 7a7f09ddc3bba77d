import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { defaultRoleIdsSql } from '../roles/index.ts';
import { accountTablesSql } from '../tenants/index.ts';
import type { UserRow } from './store.ts';

/**
 * SQL of user creation (create.ts): every new user, one or a batch, is written by the same single statement, and
 * the facts a batch's checks need are read by one more.
 */

/** A new user's row and what goes beside it: the phone, the membership of `active_tenant_id` and its roles. */
export interface NewUserRow {
  id: string;
  email: string | null;
  username: string | null;
  name: string;
  profile_picture_url: string | null;
  external_id: string | null;
  verified: boolean;
  mfa_bypass: boolean;
  provider: string;
  managed_by: string;
  metadata: Record<string, unknown>;
  vendor_metadata: Record<string, unknown>;
  password_hash: string | null;
  password_temporary: boolean;
  must_reset_password: boolean;
  mfa_enrolled: boolean;
  authenticator_mfa_secret_enc: string | null;
  phone_number_type: string | null;
  active_tenant_id: string;
  /** Not users columns: whether a membership is made, its expiry, whether it waits for consent, its roles; the phone. */
  join_account: boolean;
  expires_at: Date | null;
  pending: boolean;
  role_ids: string[];
  phone: string | null;
}

/** An event as a WITH item of the statement (events' `inlineMany`). */
export interface InlineEvents {
  cte: (first: number) => string;
  values: unknown[];
  /** How many events (the text of `cte` depends on it). */
  count: number;
}

const USER_COLUMNS = `id, email, username, name, profile_picture_url, external_id, verified, mfa_bypass, provider, managed_by,
  metadata, vendor_metadata, password_hash, password_temporary, must_reset_password, mfa_enrolled, authenticator_mfa_secret_enc,
  phone_number_type, active_tenant_id`;

/**
 * Inserts new users (fresh ids, distinct role ids: no conflict handling) in ONE statement: the rows are read once
 * (jsonb_to_recordset) and each table is a data-modifying CTE over them, with the events beside. A membership needs a
 * live account (its sub-account access follows the account's setting); the foreign keys between the rows are checked
 * at the end of the statement, when every row exists. Answers the users rows (`rows`) and how many memberships were
 * made: fewer than asked means an account is not live. A unique violation (email, username, phone) is thrown.
 */
export async function insertUsers(
  q: Queryable,
  users: NewUserRow[],
  events: InlineEvents | undefined,
  rows: boolean,
): Promise<{ users: UserRow[]; joined: number }> {
  const answer = rows
    ? 'SELECT u.*, (SELECT count(*) FROM m)::int AS joined_count FROM u'
    : 'SELECT (SELECT count(*) FROM m)::int AS joined_count';
  const text = `WITH x AS MATERIALIZED (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, email text, username text, name text, profile_picture_url text,
         external_id text, verified boolean, mfa_bypass boolean, provider text, managed_by text, metadata jsonb, vendor_metadata jsonb,
         password_hash text, password_temporary boolean, must_reset_password boolean, mfa_enrolled boolean,
         authenticator_mfa_secret_enc text, phone_number_type text, active_tenant_id text, join_account boolean,
         expires_at timestamptz, pending boolean, role_ids jsonb, phone text)
     ), u AS (
       INSERT INTO users (${USER_COLUMNS}) SELECT ${USER_COLUMNS} FROM x RETURNING *
     ), p AS (
       -- A new user holds no phone yet: theirs is the primary.
       INSERT INTO user_phone_numbers (phone_number, user_id, is_primary) SELECT phone, id, true FROM x WHERE phone IS NOT NULL
     ), m AS (
       INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, temporary_expiration_date, pending)
       SELECT x.active_tenant_id, x.id, t.sub_account_access_type IS DISTINCT FROM 'defaultOff', x.expires_at, x.pending
         FROM x JOIN (${accountTablesSql.liveAccounts}) t ON t.tenant_id = x.active_tenant_id WHERE x.join_account
       RETURNING tenant_id, user_id
     ), r AS (
       INSERT INTO user_roles (tenant_id, user_id, role_id)
       SELECT m.tenant_id, m.user_id, r.v::uuid FROM m JOIN x ON x.id = m.user_id, jsonb_array_elements_text(x.role_ids) AS r(v)
     )${events ? `, ${events.cte(2)}` : ''}
     ${answer}`;
  // One user (every flow but bulk import) with at most one event has a constant text: prepared, so it is planned once
  // per connection; a batch's text varies with its event count and stays unnamed.
  const { rows: out } = await q.query<UserRow & { joined_count: number }>(
    users.length === 1 && (events?.count ?? 0) <= 1 ? prepared(text) : text,
    [JSON.stringify(users), ...(events?.values ?? [])],
  );
  const joined = out[0]?.joined_count ?? 0;
  for (const r of out) delete (r as Partial<typeof r>).joined_count;
  return { users: out, joined };
}

/** What the checks of a batch need, read in one statement. */
export interface BatchFacts {
  /** Live accounts among the tenant ids. */
  accounts: Set<string>;
  /** The (lower-cased) emails some user already has. */
  emails: Set<string>;
  /** Each given username with its lower() (PostgreSQL's, as the unique index has it) and whether a user holds it. */
  usernames: Map<string, { lower: string; taken: boolean }>;
  /** The phone numbers some user already holds. */
  phones: Set<string>;
  /** The default role ids of each account (the environment's and its own), as roles' `defaultRoleIds` orders them. */
  defaults: Map<string, string[]>;
}

export async function batchFacts(
  q: Queryable,
  ask: { tenantIds: string[]; emails: string[]; usernames: string[]; phones: string[] },
): Promise<BatchFacts> {
  const { rows } = await q.query<{
    accounts: string[];
    emails: string[];
    names: [string, string, boolean][];
    phones: string[];
    defaults: Record<string, string[]>;
  }>(
    `SELECT
       (SELECT coalesce(jsonb_agg(t.tenant_id), '[]'::jsonb) FROM (${accountTablesSql.liveAccounts}) t WHERE t.tenant_id = ANY($1::text[])) AS accounts,
       (SELECT coalesce(jsonb_agg(u.email), '[]'::jsonb) FROM users u WHERE u.email = ANY($2::text[])) AS emails,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(g.u, lower(g.u), EXISTS (SELECT 1 FROM users WHERE lower(username) = lower(g.u)))), '[]'::jsonb)
          FROM unnest($3::text[]) AS g(u)) AS names,
       (SELECT coalesce(jsonb_agg(p.phone_number), '[]'::jsonb) FROM user_phone_numbers p WHERE p.phone_number = ANY($4::text[])) AS phones,
       (SELECT coalesce(jsonb_object_agg(a.t, to_jsonb(ARRAY(${defaultRoleIdsSql('a.t')}))), '{}'::jsonb)
          FROM unnest($1::text[]) AS a(t)) AS defaults`,
    [ask.tenantIds, ask.emails, ask.usernames, ask.phones],
  );
  const r = rows[0];
  const defaults = new Map<string, string[]>(ask.tenantIds.map((t) => [t, r.defaults[t] ?? []]));
  return {
    defaults,
    accounts: new Set(r.accounts),
    emails: new Set(r.emails),
    usernames: new Map(r.names.map(([u, lower, taken]) => [u, { lower, taken }])),
    phones: new Set(r.phones),
  };
}
