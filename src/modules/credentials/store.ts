import { newId } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';
import { liveAccount } from '../tenants/index.ts';
import type { PasswordPolicy } from './policy.ts';

/**
 * SQL of the policy tables. A scope is an account id, or null for the environment level. "Own" reads take exactly the
 * scope's row; "effective" reads take the account's row, else the environment's (one index probe on the
 * coalesce(tenant_id, '') unique index each).
 */
export type Scope = string | null;

export interface PasswordPolicyRow {
  tenant_id: string | null;
  id: string;
  min_length: number;
  max_length: number;
  allow_passphrases: boolean;
  min_phrase_length: number;
  min_optional_tests_to_pass: number;
  require_lowercase: boolean;
  require_uppercase: boolean;
  require_numbers: boolean;
  require_special_chars: boolean;
  block_pwned_passwords: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface HistoryPolicyRow {
  tenant_id: string | null;
  id: string;
  enabled: boolean;
  history_size: number;
  created_at: Date;
  updated_at: Date;
}

export interface LockoutPolicyRow {
  tenant_id: string | null;
  id: string;
  enabled: boolean;
  max_attempts: number;
  lock_duration_minutes: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface RotationPolicyRow {
  tenant_id: string | null;
  id: string;
  is_active: boolean;
  /** Seconds. */
  rotation_period: number;
  /** Seconds. */
  notification_period: number;
  created_at: Date;
  updated_at: Date;
}

export type PolicyTable =
  | 'password_policies'
  | 'password_history_policies'
  | 'lockout_policies'
  | 'password_rotation_policies';

/** The scope's own row. */
export async function findOwn<T>(q: Queryable, table: PolicyTable, scope: Scope, lock = false): Promise<T | undefined> {
  const { rows } = await q.query<T>(
    `SELECT * FROM ${table} WHERE coalesce(tenant_id, '') = coalesce($1::text, '')${lock ? ' FOR UPDATE' : ''}`,
    [scope],
  );
  return rows[0];
}

/** The row that applies to the scope: the account's own, else the environment's. */
export async function findEffective<T>(q: Queryable, table: PolicyTable, scope: Scope): Promise<T | undefined> {
  const { rows } = await q.query<T>(
    `SELECT * FROM ${table} WHERE coalesce(tenant_id, '') IN (coalesce($1::text, ''), '') ORDER BY tenant_id NULLS LAST LIMIT 1`,
    [scope],
  );
  return rows[0];
}

/** Whether the account is live; with `lock`, holds a share lock on it until the transaction ends. */
export async function accountIsLive(q: Queryable, tenantId: string, lock = false): Promise<boolean> {
  return (await liveAccount(q, tenantId, lock ? 'FOR SHARE' : undefined)) !== undefined;
}

/** Serialises writers of one scope's policies (the first write of a scope has no row to lock yet). */
export async function lockScope(q: Queryable, scope: Scope): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(7243410, hashtext(coalesce($1::text, '')))`, [scope]);
}

const PASSWORD_COLUMNS: Record<keyof PasswordPolicy, keyof PasswordPolicyRow> = {
  minLength: 'min_length',
  maxLength: 'max_length',
  allowPassphrases: 'allow_passphrases',
  minPhraseLength: 'min_phrase_length',
  minOptionalTestsToPass: 'min_optional_tests_to_pass',
  requireLowercase: 'require_lowercase',
  requireUppercase: 'require_uppercase',
  requireNumbers: 'require_numbers',
  requireSpecialChars: 'require_special_chars',
  blockPwnedPasswords: 'block_pwned_passwords',
};

export function toPolicy(r: PasswordPolicyRow): PasswordPolicy {
  return Object.fromEntries(Object.entries(PASSWORD_COLUMNS).map(([k, c]) => [k, r[c]])) as unknown as PasswordPolicy;
}

/** Writes the scope's complete password policy (insert or replace). Call under `lockScope`. */
export async function upsertPasswordPolicy(q: Queryable, scope: Scope, p: PasswordPolicy): Promise<PasswordPolicyRow> {
  const fields = Object.keys(PASSWORD_COLUMNS) as (keyof PasswordPolicy)[];
  const cols = fields.map((f) => PASSWORD_COLUMNS[f]);
  const { rows } = await q.query<PasswordPolicyRow>(
    `INSERT INTO password_policies (tenant_id, id, ${cols.join(', ')})
     VALUES ($1, $2, ${cols.map((_, i) => `$${i + 3}`).join(', ')})
     ON CONFLICT ((coalesce(tenant_id, ''))) DO UPDATE SET ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()
     RETURNING *`,
    [scope, newId(), ...fields.map((f) => p[f])],
  );
  return rows[0];
}

/** Inserts the scope's history policy; undefined when the scope has one already. */
export async function insertHistoryPolicy(
  q: Queryable,
  scope: Scope,
  v: { enabled: boolean; historySize: number },
): Promise<HistoryPolicyRow | undefined> {
  const { rows } = await q.query<HistoryPolicyRow>(
    `INSERT INTO password_history_policies (tenant_id, id, enabled, history_size) VALUES ($1, $2, $3, $4)
     ON CONFLICT ((coalesce(tenant_id, ''))) DO NOTHING RETURNING *`,
    [scope, newId(), v.enabled, v.historySize],
  );
  return rows[0];
}

export async function updateHistoryPolicy(
  q: Queryable,
  id: string,
  v: { enabled: boolean; historySize: number },
): Promise<HistoryPolicyRow> {
  const { rows } = await q.query<HistoryPolicyRow>(
    'UPDATE password_history_policies SET enabled = $2, history_size = $3, updated_at = now() WHERE id = $1 RETURNING *',
    [id, v.enabled, v.historySize],
  );
  return rows[0];
}

export interface LockoutValues {
  enabled: boolean;
  maxAttempts: number;
  lockDurationMinutes: number | null;
}

/** Inserts the scope's lockout policy; undefined when the scope has one already. */
export async function insertLockoutPolicy(
  q: Queryable,
  scope: Scope,
  v: LockoutValues,
): Promise<LockoutPolicyRow | undefined> {
  const { rows } = await q.query<LockoutPolicyRow>(
    `INSERT INTO lockout_policies (tenant_id, id, enabled, max_attempts, lock_duration_minutes) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ((coalesce(tenant_id, ''))) DO NOTHING RETURNING *`,
    [scope, newId(), v.enabled, v.maxAttempts, v.lockDurationMinutes],
  );
  return rows[0];
}

export async function updateLockoutPolicy(q: Queryable, id: string, v: LockoutValues): Promise<LockoutPolicyRow> {
  const { rows } = await q.query<LockoutPolicyRow>(
    'UPDATE lockout_policies SET enabled = $2, max_attempts = $3, lock_duration_minutes = $4, updated_at = now() WHERE id = $1 RETURNING *',
    [id, v.enabled, v.maxAttempts, v.lockDurationMinutes],
  );
  return rows[0];
}

/** The user's last `n` password hashes, newest first. */
export async function lastHashes(q: Queryable, userId: string, n: number): Promise<string[]> {
  const { rows } = await q.query<{ hash: string }>(
    'SELECT hash FROM password_history WHERE user_id = $1 ORDER BY seq DESC LIMIT $2',
    [userId, n],
  );
  return rows.map((r) => r.hash);
}

/** The largest history size of any enabled history policy (environment or account); 0 when none is enabled. */
export async function largestEnabledHistory(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: number | null }>(
    'SELECT max(history_size)::int AS n FROM password_history_policies WHERE enabled',
  );
  return rows[0]?.n ?? 0;
}

/** Adds a hash to the user's history and keeps the newest `keep` (0 clears it). */
export async function pushHistory(q: Queryable, userId: string, hash: string, keep: number): Promise<void> {
  if (keep > 0) await q.query('INSERT INTO password_history (user_id, hash) VALUES ($1, $2)', [userId, hash]);
  await q.query(
    `DELETE FROM password_history WHERE user_id = $1
       AND seq NOT IN (SELECT seq FROM password_history WHERE user_id = $1 ORDER BY seq DESC LIMIT $2)`,
    [userId, keep],
  );
}

export async function deleteHistory(q: Queryable, userId: string): Promise<void> {
  await q.query('DELETE FROM password_history WHERE user_id = $1', [userId]);
}

export async function deleteAccountPolicies(q: Queryable, tenantId: string): Promise<void> {
  for (const table of [
    'password_policies',
    'password_history_policies',
    'lockout_policies',
    'password_rotation_policies',
  ] as const) {
    await q.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  }
}

export interface RotationValues {
  isActive: boolean;
  rotationPeriod: number;
  notificationPeriod: number;
}

/** Writes the scope's rotation policy (insert or replace). Call under `lockScope`. */
export async function upsertRotationPolicy(q: Queryable, scope: Scope, v: RotationValues): Promise<RotationPolicyRow> {
  const { rows } = await q.query<RotationPolicyRow>(
    `INSERT INTO password_rotation_policies (tenant_id, id, is_active, rotation_period, notification_period) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ((coalesce(tenant_id, ''))) DO UPDATE SET is_active = $3, rotation_period = $4, notification_period = $5, updated_at = now()
     RETURNING *`,
    [scope, newId(), v.isActive, v.rotationPeriod, v.notificationPeriod],
  );
  return rows[0];
}

export interface UserEmailsPolicyRow {
  allow_email_change: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function userEmailsPolicy(q: Queryable): Promise<UserEmailsPolicyRow | undefined> {
  const { rows } = await q.query<UserEmailsPolicyRow>(
    'SELECT allow_email_change, created_at, updated_at FROM user_emails_policy',
  );
  return rows[0];
}

export async function upsertUserEmailsPolicy(q: Queryable, allowEmailChange: boolean): Promise<UserEmailsPolicyRow> {
  const { rows } = await q.query<UserEmailsPolicyRow>(
    `INSERT INTO user_emails_policy (singleton, allow_email_change) VALUES (true, $1)
     ON CONFLICT (singleton) DO UPDATE SET allow_email_change = $1, updated_at = now()
     RETURNING allow_email_change, created_at, updated_at`,
    [allowEmailChange],
  );
  return rows[0];
}
