import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { dateFromJson } from '../../lib/time.ts';
import { accountTablesSql } from '../tenants/index.ts';

export interface UserRow {
  id: string;
  email: string | null;
  username: string | null;
  name: string;
  profile_picture_url: string | null;
  external_id: string | null;
  verified: boolean;
  mfa_enrolled: boolean;
  mfa_bypass: boolean;
  provider: string;
  managed_by: string;
  metadata: Record<string, unknown>;
  vendor_metadata: Record<string, unknown>;
  password_hash: string | null;
  is_locked: boolean;
  locked_until: Date | null;
  failed_attempts: number;
  invisible: boolean;
  super_user: boolean;
  active_tenant_id: string | null;
  created_at: Date;
  updated_at: Date;
  last_login: Date | null;
  phone_number_type?: 'auth' | 'mfa' | null;
  authenticator_mfa_secret_enc?: string | null;
  must_reset_password?: boolean;
  /** When the password was last set (migration 0031; password rotation). */
  password_changed_at: Date;
  /** Set by an account administrator for someone else: dropped when the owner proves the mailbox (migration 0037). */
  password_temporary?: boolean;
}

/** The keys of T whose values are dates. */
type DateKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends Date ? K : never }[keyof T];
/** Every date column of UserRow (the compiler checks the list is complete): what `userFromJson` turns back into Dates. */
const USER_DATE_COLUMNS = [
  'created_at',
  'updated_at',
  'last_login',
  'locked_until',
  'password_changed_at',
] as const satisfies readonly DateKeys<UserRow>[];
const USER_DATES_COMPLETE: Exclude<DateKeys<UserRow>, (typeof USER_DATE_COLUMNS)[number]> extends never ? true : never =
  true;
void USER_DATES_COMPLETE;

/**
 * A user row read as JSON (`to_json(u)`, for a statement that answers one JSON value instead of many columns: the pg
 * client's cost is per column) with its dates as Dates, as `SELECT u.*` would give it.
 */
export function userFromJson(o: Record<string, unknown>): UserRow {
  for (const c of USER_DATE_COLUMNS) if (typeof o[c] === 'string') o[c] = new Date(o[c] as string);
  return o as unknown as UserRow;
}

/**
 * Memberships read as JSON (`json_agg` of the `membershipsWithStateSql` rows, inside a hot-path statement that answers
 * one JSON value) with their dates as Dates, as `membershipsWithState` would give them.
 */
export function membershipsFromJson(rows: Record<string, unknown>[]): (MembershipRow & { live: boolean })[] {
  return rows.map(
    (m) =>
      ({
        ...m,
        created_at: dateFromJson(m.created_at),
        temporary_expiration_date: dateFromJson(m.temporary_expiration_date),
      }) as unknown as MembershipRow & { live: boolean },
  );
}

export interface MembershipRow {
  tenant_id: string;
  is_disabled: boolean;
  temporary_expiration_date: Date | null;
  sub_account_access_allowed: boolean;
  sub_account_access_type: string;
  created_at: Date;
  role_ids: string[];
  /** Made by an account administrator for an existing user, not accepted yet: gives no access (migration 0037). */
  pending: boolean;
}

export async function findById(q: Queryable, id: string, lock = false): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(`SELECT * FROM users WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

const BY_EMAIL = prepared('SELECT * FROM users WHERE email = $1');
export async function findByEmail(q: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(BY_EMAIL, [email.toLowerCase()]);
  return rows[0];
}

export async function findByUsername(q: Queryable, username: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>('SELECT * FROM users WHERE lower(username) = lower($1)', [username]);
  return rows[0];
}

export async function findByPhone(q: Queryable, phone: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(
    'SELECT u.* FROM user_phone_numbers p JOIN users u ON u.id = p.user_id WHERE p.phone_number = $1',
    [phone],
  );
  return rows[0];
}

/** Every membership of a user with its role ids and the account's sub-account access type, oldest first. */
export async function memberships(q: Queryable, userId: string): Promise<MembershipRow[]> {
  return membershipsWithState(q, userId);
}

/**
 * The query of `membershipsWithState` for the user `userExpr` (a parameter such as `$1`, or a column of an enclosing
 * query, e.g. the refresh lookup's `s.user_id`), so sign-in and refresh can read memberships within a larger statement.
 */
export const membershipsWithStateSql = (userExpr: string) =>
  `SELECT ut.tenant_id, ut.is_disabled, ut.temporary_expiration_date, ut.sub_account_access_allowed, ut.created_at,
            ut.pending, t.sub_account_access_type, t.deleted_at IS NULL AND NOT ut.pending AS live,
            coalesce(array_agg(ur.role_id::text) FILTER (WHERE ur.role_id IS NOT NULL), '{}') AS role_ids
     FROM user_tenants ut
     JOIN (${accountTablesSql.accounts}) t ON t.tenant_id = ut.tenant_id
     LEFT JOIN user_roles ur ON ur.tenant_id = ut.tenant_id AND ur.user_id = ut.user_id
     WHERE ut.user_id = ${userExpr}
     GROUP BY ut.tenant_id, ut.user_id, t.sub_account_access_type, t.deleted_at
     ORDER BY ut.created_at, ut.tenant_id`;
const MEMBERSHIPS_WITH_STATE = prepared(membershipsWithStateSql('$1'));

/** `memberships`, each also saying whether it is live: its account not removed and the membership not pending. */
export async function membershipsWithState(
  q: Queryable,
  userId: string,
): Promise<(MembershipRow & { live: boolean })[]> {
  const { rows } = await q.query<MembershipRow & { live: boolean }>(MEMBERSHIPS_WITH_STATE, [userId]);
  return rows;
}

/**
 * The user's membership of `tenantId` or of its nearest ancestor, with the distance (0 = the account itself); the
 * membership has the shape `memberships` gives. Pending memberships are skipped (they give no access). One statement:
 * it runs on every sign-in and token refresh.
 */
export async function nearestMembership(
  q: Queryable,
  userId: string,
  tenantId: string,
): Promise<{ membership: MembershipRow; distance: number } | undefined> {
  const { rows } = await q.query<MembershipRow & { d: number }>(
    `WITH RECURSIVE up AS (
       SELECT tenant_id, parent_tenant_id, 0 AS d FROM (${accountTablesSql.accounts}) t
        WHERE tenant_id = $2 AND deleted_at IS NULL
       UNION ALL
       SELECT t.tenant_id, t.parent_tenant_id, up.d + 1
         FROM (${accountTablesSql.accounts}) t JOIN up ON t.tenant_id = up.parent_tenant_id
       WHERE up.d < 1000 AND t.deleted_at IS NULL),
     nearest AS (
       SELECT up.tenant_id, up.d FROM up
       JOIN user_tenants ut ON ut.tenant_id = up.tenant_id AND ut.user_id = $1 AND NOT ut.pending
       ORDER BY up.d LIMIT 1)
     SELECT n.d, ut.tenant_id, ut.is_disabled, ut.temporary_expiration_date, ut.sub_account_access_allowed, ut.created_at,
            ut.pending, t.sub_account_access_type,
            coalesce(array_agg(ur.role_id::text) FILTER (WHERE ur.role_id IS NOT NULL), '{}') AS role_ids
     FROM nearest n
     JOIN user_tenants ut ON ut.tenant_id = n.tenant_id AND ut.user_id = $1
     JOIN (${accountTablesSql.accounts}) t ON t.tenant_id = ut.tenant_id
     LEFT JOIN user_roles ur ON ur.tenant_id = ut.tenant_id AND ur.user_id = ut.user_id
     GROUP BY n.d, ut.tenant_id, ut.user_id, t.sub_account_access_type`,
    [userId, tenantId],
  );
  if (!rows[0]) return undefined;
  const { d, ...membership } = rows[0];
  return { membership, distance: d };
}

export async function updateUser(q: Queryable, id: string, values: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(values);
  if (cols.length === 0) return;
  await q.query(
    `UPDATE users SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
    [id, ...cols.map((c) => (c === 'metadata' || c === 'vendor_metadata' ? JSON.stringify(values[c]) : values[c]))],
  );
}

/** Replaces a password hash only if it is still `current` (a change made meanwhile wins); true when replaced. */
/**
 * A rehash of the same password (an imported hash replaced by argon2id), only while `current` is still stored. It
 * names the user in `gatehouse.password_rehash` so the rotation clock keeps running (migration 0031's trigger).
 */
export async function replacePasswordHash(q: Queryable, id: string, current: string, next: string): Promise<boolean> {
  const r = await q.query(
    `WITH marked AS (SELECT set_config('gatehouse.password_rehash', $1::text, true) AS v)
     UPDATE users SET password_hash = $3, updated_at = now() FROM marked WHERE id = $1::uuid AND password_hash = $2 AND marked.v IS NOT NULL`,
    [id, current, next],
  );
  return r.rowCount > 0;
}

export async function addMembership(
  q: Queryable,
  tenantId: string,
  userId: string,
  m: { subAccess: boolean; expiresAt: Date | null; pending?: boolean },
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, temporary_expiration_date, pending)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [tenantId, userId, m.subAccess, m.expiresAt, m.pending ?? false],
  );
  return r.rowCount > 0;
}

export async function updateMembership(
  q: Queryable,
  tenantId: string,
  userId: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  const cols = Object.keys(values);
  const r = await q.query(
    `UPDATE user_tenants SET ${cols.map((c, i) => `${c} = $${i + 3}`).join(', ')} WHERE tenant_id = $1 AND user_id = $2`,
    [tenantId, userId, ...cols.map((c) => values[c])],
  );
  return r.rowCount > 0;
}

export async function removeMembership(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const r = await q.query('DELETE FROM user_tenants WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
  return r.rowCount > 0;
}

export async function addRoles(q: Queryable, tenantId: string, userId: string, roleIds: string[]): Promise<void> {
  if (roleIds.length === 0) return;
  await q.query(
    `INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING`,
    [tenantId, userId, roleIds],
  );
}

export async function removeRoles(q: Queryable, tenantId: string, userId: string, roleIds: string[]): Promise<void> {
  await q.query('DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2 AND role_id::text = ANY($3::text[])', [
    tenantId,
    userId,
    roleIds,
  ]);
}

export async function deleteUser(q: Queryable, id: string): Promise<boolean> {
  const r = await q.query('DELETE FROM users WHERE id = $1', [id]);
  return r.rowCount > 0;
}

/**
 * After memberships of `tenantId` were removed: users left with no account are deleted, and users whose active
 * account it was move to their oldest remaining one.
 */
export async function settleAfterLeaving(q: Queryable, userIds: string[], tenantId: string): Promise<void> {
  if (userIds.length === 0) return;
  await q.query(
    'DELETE FROM users WHERE id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM user_tenants ut WHERE ut.user_id = users.id)',
    [userIds],
  );
  await q.query(
    `UPDATE users u SET active_tenant_id = (SELECT ut.tenant_id FROM user_tenants ut WHERE ut.user_id = u.id
                                              ORDER BY ut.pending, ut.created_at, ut.tenant_id LIMIT 1)
     WHERE u.id = ANY($1::uuid[]) AND u.active_tenant_id = $2`,
    [userIds, tenantId],
  );
}

/** An account is going away: all its memberships go, then the users are settled. */
export async function removeAccountUsers(
  q: Queryable,
  tenantId: string,
): Promise<Array<{ user_id: string; email: string }>> {
  const { rows } = await q.query<{ user_id: string; email: string }>(
    'WITH gone AS (DELETE FROM user_tenants WHERE tenant_id = $1 RETURNING user_id) SELECT g.user_id, u.email FROM gone g JOIN users u ON u.id = g.user_id ORDER BY u.email, g.user_id',
    [tenantId],
  );
  await settleAfterLeaving(
    q,
    rows.map((r) => r.user_id),
    tenantId,
  );
  return rows;
}

/** Accepts a pending membership (it gives access from now on); false when there is none pending. */
export async function acceptMembership(q: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const r = await q.query('UPDATE user_tenants SET pending = false WHERE tenant_id = $1 AND user_id = $2 AND pending', [
    tenantId,
    userId,
  ]);
  return r.rowCount > 0;
}

/**
 * The owner proved the mailbox: a temporary (administrator-set) password is dropped, so it signs in no more. True
 * when one was dropped (the caller's flow may then set the owner's own password, and ends the older sessions).
 */
export async function dropTemporaryPassword(q: Queryable, userId: string): Promise<boolean> {
  const r = await q.query(
    'UPDATE users SET password_hash = NULL, password_temporary = false, updated_at = now() WHERE id = $1 AND password_temporary',
    [userId],
  );
  return r.rowCount > 0;
}
