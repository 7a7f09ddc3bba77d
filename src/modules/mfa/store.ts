import { newId } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { clearMigratedFactors, lockMigratedFactors, setMfaEnrolled, userRowsSql } from '../users/index.ts';

// The sign-in hot path's statements (gate and TOTP verify) live in signin-store.ts.
export * from './signin-store.ts';

export interface ConfigRow {
  authenticator_active: boolean;
  service_name: string;
  sms_active: boolean;
  sms_ttl_seconds: number;
  email_active: boolean;
  email_ttl_seconds: number;
  email_sender: string;
  webauthn_platform_active: boolean;
  webauthn_cross_platform_active: boolean;
}
export interface PolicyRow {
  tenant_id: string | null;
  id: string;
  enforce: 'Off' | 'DontForce' | 'Force' | 'ForceExceptSAML';
  allow_remember: boolean;
  device_expiration_seconds: number;
  created_at: Date;
  updated_at: Date;
}
export interface DeviceRow {
  id: string;
  user_id: string;
  kind: 'authenticator' | 'sms';
  secret_enc: string | null;
  phone_number: string | null;
  last_step: string | null;
  source: string;
  verified_at: Date | null;
  created_at: Date;
}
export interface TokenRow {
  token_hash: string;
  user_id: string;
  tenant_id: string;
  amr: string[];
  failures: number;
  expires_at: Date;
}
export interface CodeRow {
  token_hash: string;
  user_id: string;
  purpose: string;
  device_id: string | null;
  phone_number: string | null;
  mfa_token_hash: string | null;
  code_hash: string;
  attempts: number;
  expires_at: Date;
}

// -- configuration and policy --

export async function config(q: Queryable): Promise<ConfigRow> {
  const { rows } = await q.query<ConfigRow>('SELECT * FROM mfa_config WHERE id');
  return rows[0];
}
export async function updateConfig(q: Queryable, values: Partial<ConfigRow>): Promise<ConfigRow> {
  const cols = Object.keys(values);
  if (cols.length === 0) return config(q);
  const { rows } = await q.query<ConfigRow>(
    `UPDATE mfa_config SET ${cols.map((c, i) => `${c} = $${i + 1}`).join(', ')}, updated_at = now() WHERE id RETURNING *`,
    cols.map((c) => (values as Record<string, unknown>)[c]),
  );
  return rows[0];
}

/** The scope's own policy (tenantId undefined: the environment's). */
export async function ownPolicy(q: Queryable, tenantId: string | undefined): Promise<PolicyRow | undefined> {
  const { rows } = await q.query<PolicyRow>("SELECT * FROM mfa_policies WHERE coalesce(tenant_id, '') = $1", [
    tenantId ?? '',
  ]);
  return rows[0];
}
/** The account's own policy, else the environment's. */
export async function effectivePolicy(q: Queryable, tenantId: string | undefined): Promise<PolicyRow | undefined> {
  const { rows } = await q.query<PolicyRow>(
    "SELECT * FROM mfa_policies WHERE coalesce(tenant_id, '') IN ('', $1) ORDER BY tenant_id NULLS LAST LIMIT 1",
    [tenantId ?? ''],
  );
  return rows[0];
}
export async function insertPolicy(
  q: Queryable,
  tenantId: string | undefined,
  v: { enforce: string; allow_remember: boolean; device_expiration_seconds: number },
): Promise<PolicyRow> {
  const { rows } = await q.query<PolicyRow>(
    'INSERT INTO mfa_policies (tenant_id, id, enforce, allow_remember, device_expiration_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [tenantId ?? null, newId(), v.enforce, v.allow_remember, v.device_expiration_seconds],
  );
  return rows[0];
}
export async function updatePolicy(
  q: Queryable,
  id: string,
  v: Partial<Pick<PolicyRow, 'enforce' | 'allow_remember' | 'device_expiration_seconds'>>,
): Promise<PolicyRow> {
  const cols = Object.keys(v);
  const { rows } = await q.query<PolicyRow>(
    `UPDATE mfa_policies SET ${[...cols.map((c, i) => `${c} = $${i + 2}`), 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
    [id, ...cols.map((c) => (v as Record<string, unknown>)[c])],
  );
  return rows[0];
}
export async function forgetAccount(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM mfa_policies WHERE tenant_id = $1', [tenantId]);
}

/** The pending sign-in of an mfaToken (locked) with its user, in one statement. */
export async function lockTokenWithUser(
  q: Queryable,
  hash: string,
): Promise<{ t: TokenRow; user: Record<string, unknown> } | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT u.*, t.token_hash AS mfa_t_hash, t.tenant_id AS mfa_t_tenant, t.amr AS mfa_t_amr, t.failures AS mfa_t_failures, t.expires_at AS mfa_t_expires
       FROM mfa_tokens t JOIN (${userRowsSql}) u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.expires_at > now() FOR UPDATE OF t`,
    [hash],
  );
  const r = rows[0];
  if (!r) return undefined;
  const { mfa_t_hash, mfa_t_tenant, mfa_t_amr, mfa_t_failures, mfa_t_expires, ...user } = r;
  return {
    t: {
      token_hash: mfa_t_hash as string,
      user_id: user.id as string,
      tenant_id: mfa_t_tenant as string,
      amr: mfa_t_amr as string[],
      failures: mfa_t_failures as number,
      expires_at: mfa_t_expires as Date,
    },
    user,
  };
}

const ACCEPT_STEP_AND_TOKEN = prepared(
  `WITH a AS (UPDATE mfa_devices SET last_step = $2 WHERE id = $1 AND (last_step IS NULL OR last_step < $2) RETURNING id),
        d AS (DELETE FROM mfa_tokens WHERE token_hash = $3 AND EXISTS (SELECT 1 FROM a) RETURNING 1)
   SELECT count(*)::int AS n FROM a`,
);
/** Spends a TOTP step of a device and, when it was fresh, the mfaToken too (one statement). False: a replay. */
export async function acceptStepAndToken(
  q: Queryable,
  deviceId: string,
  step: number,
  tokenHash: string,
): Promise<boolean> {
  const { rows } = await q.query<{ n: number }>(ACCEPT_STEP_AND_TOKEN, [deviceId, step, tokenHash]);
  return rows[0].n === 1;
}

// -- devices --

export async function devices(q: Queryable, userId: string, verifiedOnly = true): Promise<DeviceRow[]> {
  const { rows } = await q.query<DeviceRow>(
    `SELECT * FROM mfa_devices WHERE user_id = $1${verifiedOnly ? ' AND verified_at IS NOT NULL' : ''} ORDER BY created_at, id`,
    [userId],
  );
  return rows;
}
export async function device(q: Queryable, userId: string, id: string, lock = false): Promise<DeviceRow | undefined> {
  const { rows } = await q.query<DeviceRow>(
    `SELECT * FROM mfa_devices WHERE user_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [userId, id],
  );
  return rows[0];
}
/** The user's enrolment in progress of a kind (unverified device), newest first. */
export async function pending(q: Queryable, userId: string, kind: DeviceRow['kind']): Promise<DeviceRow | undefined> {
  const { rows } = await q.query<DeviceRow>(
    'SELECT * FROM mfa_devices WHERE user_id = $1 AND kind = $2 AND verified_at IS NULL ORDER BY created_at DESC LIMIT 1 FOR UPDATE',
    [userId, kind],
  );
  return rows[0];
}
export async function insertDevice(
  q: Queryable,
  d: {
    userId: string;
    kind: DeviceRow['kind'];
    secretEnc?: string;
    phoneNumber?: string;
    source?: string;
    verified: boolean;
    lastStep?: number;
  },
): Promise<string> {
  const id = newId();
  await q.query(
    `INSERT INTO mfa_devices (id, user_id, kind, secret_enc, phone_number, source, last_step, verified_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, ${d.verified ? 'now()' : 'NULL'})`,
    [id, d.userId, d.kind, d.secretEnc ?? null, d.phoneNumber ?? null, d.source ?? 'enrolled', d.lastStep ?? null],
  );
  return id;
}
export async function dropPending(q: Queryable, userId: string, kind: DeviceRow['kind']): Promise<void> {
  await q.query('DELETE FROM mfa_devices WHERE user_id = $1 AND kind = $2 AND verified_at IS NULL', [userId, kind]);
}
export async function markVerified(q: Queryable, id: string, lastStep?: number): Promise<void> {
  await q.query('UPDATE mfa_devices SET verified_at = now(), last_step = coalesce($2, last_step) WHERE id = $1', [
    id,
    lastStep ?? null,
  ]);
}
/** Records `step` as used; false when it (or a later step) was used already: the code is a replay. */
export async function acceptStep(q: Queryable, id: string, step: number): Promise<boolean> {
  const { rows } = await q.query(
    'UPDATE mfa_devices SET last_step = $2 WHERE id = $1 AND (last_step IS NULL OR last_step < $2) RETURNING id',
    [id, step],
  );
  return rows.length === 1;
}
export async function deleteDevice(q: Queryable, userId: string, id: string): Promise<boolean> {
  const { rows } = await q.query('DELETE FROM mfa_devices WHERE user_id = $1 AND id = $2 RETURNING id', [userId, id]);
  return rows.length === 1;
}
/** Removes every factor of a user (devices, recovery codes, remembered devices, pending tokens and codes). */
export async function deleteAll(q: Queryable, userId: string): Promise<number> {
  const { rows } = await q.query(
    'DELETE FROM mfa_devices WHERE user_id = $1 AND verified_at IS NOT NULL RETURNING id',
    [userId],
  );
  await q.query('DELETE FROM mfa_devices WHERE user_id = $1', [userId]);
  for (const t of ['mfa_recovery_codes', 'mfa_remembered_devices', 'mfa_tokens', 'mfa_codes'])
    await q.query(`DELETE FROM ${t} WHERE user_id = $1`, [userId]);
  return rows.length;
}
export async function setEnrolled(q: Queryable, userId: string, enrolled: boolean): Promise<void> {
  await setMfaEnrolled(q, userId, enrolled);
}

/**
 * Migrated factors become devices the first time they are needed: the sealed `authenticatorAppMfaSecret` and a phone
 * number of type `mfa`. The user row is locked so two concurrent sign-ins make one device each. Answers true when a
 * device was made.
 */
export async function adoptMigrated(q: Queryable, userId: string): Promise<boolean> {
  const r = await lockMigratedFactors(q, userId);
  if (!r || (!r.secret && r.phone_type !== 'mfa')) return false;
  if (r.secret)
    await insertDevice(q, { userId, kind: 'authenticator', secretEnc: r.secret, source: 'migrated', verified: true });
  if (r.phone_type === 'mfa' && r.phone)
    await insertDevice(q, { userId, kind: 'sms', phoneNumber: r.phone, source: 'migrated', verified: true });
  await clearMigratedFactors(q, userId);
  return true;
}

// -- recovery codes --

export async function replaceRecovery(q: Queryable, userId: string, hashes: string[]): Promise<void> {
  await q.query('DELETE FROM mfa_recovery_codes WHERE user_id = $1', [userId]);
  await q.query('INSERT INTO mfa_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [userId, hashes]);
}
export async function unusedRecovery(q: Queryable, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ code_hash: string }>(
    'SELECT code_hash FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
    [userId],
  );
  return rows.map((r) => r.code_hash);
}
/** Spends a code; false when a concurrent request spent it first. */
export async function spendRecovery(q: Queryable, userId: string, hash: string): Promise<boolean> {
  const { rows } = await q.query(
    'UPDATE mfa_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING 1',
    [userId, hash],
  );
  return rows.length === 1;
}

// -- sign-in tokens --

export async function insertToken(
  q: Queryable,
  t: { hash: string; userId: string; tenantId: string; amr: string[]; ttlSeconds: number },
): Promise<void> {
  // Expired tokens are left to the housekeeping purge.
  await q.query(
    `INSERT INTO mfa_tokens (token_hash, user_id, tenant_id, amr, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [t.hash, t.userId, t.tenantId, t.amr, t.ttlSeconds],
  );
}
export async function lockToken(q: Queryable, hash: string): Promise<TokenRow | undefined> {
  const { rows } = await q.query<TokenRow>(
    'SELECT * FROM mfa_tokens WHERE token_hash = $1 AND expires_at > now() FOR UPDATE',
    [hash],
  );
  return rows[0];
}
export async function deleteToken(q: Queryable, hash: string): Promise<void> {
  await q.query('DELETE FROM mfa_tokens WHERE token_hash = $1', [hash]);
}
/** Counts a wrong code against the token; at `max` the token is burnt. */
export async function tokenFailure(q: Queryable, hash: string, max: number): Promise<void> {
  await q.query('UPDATE mfa_tokens SET failures = failures + 1 WHERE token_hash = $1', [hash]);
  await q.query('DELETE FROM mfa_tokens WHERE token_hash = $1 AND failures >= $2', [hash, max]);
}

// -- delivered codes --

export async function insertCode(
  q: Queryable,
  c: {
    hash: string;
    userId: string;
    purpose: string;
    deviceId?: string;
    phoneNumber?: string;
    mfaTokenHash?: string;
    codeHash: string;
    ttlSeconds: number;
  },
): Promise<void> {
  await q.query('DELETE FROM mfa_codes WHERE user_id = $1 AND expires_at < now()', [c.userId]);
  await q.query(
    `INSERT INTO mfa_codes (token_hash, user_id, purpose, device_id, phone_number, mfa_token_hash, code_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    [
      c.hash,
      c.userId,
      c.purpose,
      c.deviceId ?? null,
      c.phoneNumber ?? null,
      c.mfaTokenHash ?? null,
      c.codeHash,
      c.ttlSeconds,
    ],
  );
}
export async function lockCode(q: Queryable, hash: string): Promise<CodeRow | undefined> {
  const { rows } = await q.query<CodeRow>(
    'SELECT * FROM mfa_codes WHERE token_hash = $1 AND expires_at > now() FOR UPDATE',
    [hash],
  );
  return rows[0];
}
export async function deleteCode(q: Queryable, hash: string): Promise<void> {
  await q.query('DELETE FROM mfa_codes WHERE token_hash = $1', [hash]);
}
export async function codeFailure(q: Queryable, hash: string, max: number): Promise<void> {
  await q.query('UPDATE mfa_codes SET attempts = attempts + 1 WHERE token_hash = $1', [hash]);
  await q.query('DELETE FROM mfa_codes WHERE token_hash = $1 AND attempts >= $2', [hash, max]);
}

// -- remembered devices --

/** Expired rows are left to the housekeeping purge. */
export async function remember(q: Queryable, userId: string, hash: string, ttlSeconds: number): Promise<void> {
  await q.query(
    'INSERT INTO mfa_remembered_devices (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))',
    [hash, userId, ttlSeconds],
  );
}
/** A remembered device is valid while not expired and not older than the policy's current expiration allows. */
export async function isRemembered(
  q: Queryable,
  userId: string,
  hash: string,
  maxAgeSeconds: number,
): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM mfa_remembered_devices WHERE token_hash = $1 AND user_id = $2 AND expires_at > now() AND created_at > now() - make_interval(secs => $3)',
    [hash, userId, maxAgeSeconds],
  );
  return rows.length === 1;
}
