import { newId } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';

export type DeviceType = 'Platform' | 'CrossPlatform';
export type Purpose = 'register' | 'mfa-enroll' | 'mfa-verify' | 'disable' | 'login';

export interface CredentialRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Uint8Array;
  /** bigint, as the driver answers it (string or number). */
  counter: string | number;
  transports: string[];
  device_type: DeviceType;
  backed_up: boolean;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}
export interface ChallengeRow {
  challenge: string;
  purpose: Purpose;
  user_id: string | null;
  mfa_token_hash: string | null;
  device_id: string | null;
  expires_at: Date;
}

// -- credentials --

/** Inserts a credential; undefined when its credential id is registered already (to anyone). */
export async function insertCredential(
  q: Queryable,
  c: {
    userId: string;
    credentialId: string;
    publicKey: Uint8Array;
    counter: number;
    transports: string[];
    deviceType: DeviceType;
    backedUp: boolean;
    name: string;
  },
): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(
    `INSERT INTO webauthn_credentials (id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, name)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (credential_id) DO NOTHING RETURNING *`,
    [
      newId(),
      c.userId,
      c.credentialId,
      Buffer.from(c.publicKey),
      c.counter,
      c.transports,
      c.deviceType,
      c.backedUp,
      c.name,
    ],
  );
  return rows[0];
}

/** The user's credentials (of the given device types), oldest first. */
export async function credentialsOf(q: Queryable, userId: string, types?: DeviceType[]): Promise<CredentialRow[]> {
  const { rows } = await q.query<CredentialRow>(
    `SELECT * FROM webauthn_credentials WHERE user_id = $1${types ? ' AND device_type = ANY($2::text[])' : ''}
      ORDER BY created_at, id`,
    types ? [userId, types] : [userId],
  );
  return rows;
}

/** One credential of a user by its device id (locked when asked). */
export async function credential(
  q: Queryable,
  userId: string,
  id: string,
  lock = false,
): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(
    `SELECT * FROM webauthn_credentials WHERE user_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [userId, id],
  );
  return rows[0];
}

/** A credential by the authenticator's credential id (a passkey sign-in names no user), locked. */
export async function credentialByCredentialId(q: Queryable, credentialId: string): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(
    'SELECT * FROM webauthn_credentials WHERE credential_id = $1 FOR UPDATE',
    [credentialId],
  );
  return rows[0];
}

/**
 * Records a use: the new signature counter, only if it moved forward (or both are 0: an authenticator without a
 * counter). False: another use got there first with this counter or a higher one (a possible clone).
 */
export async function recordUse(q: Queryable, id: string, counter: number, backedUp: boolean): Promise<boolean> {
  const { rows } = await q.query(
    `UPDATE webauthn_credentials SET counter = $2, backed_up = $3, last_used_at = now()
      WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0)) RETURNING id`,
    [id, counter, backedUp],
  );
  return rows.length === 1;
}

export async function deleteCredential(q: Queryable, userId: string, id: string): Promise<boolean> {
  const { rows } = await q.query('DELETE FROM webauthn_credentials WHERE user_id = $1 AND id = $2 RETURNING id', [
    userId,
    id,
  ]);
  return rows.length === 1;
}

export async function deleteAllOf(q: Queryable, userId: string): Promise<number> {
  const { rows } = await q.query('DELETE FROM webauthn_credentials WHERE user_id = $1 RETURNING id', [userId]);
  await q.query('DELETE FROM webauthn_challenges WHERE user_id = $1', [userId]);
  return rows.length;
}

// -- challenges --

export async function insertChallenge(
  q: Queryable,
  c: {
    challenge: string;
    purpose: Purpose;
    userId?: string;
    mfaTokenHash?: string;
    deviceId?: string;
    ttlSeconds: number;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO webauthn_challenges (challenge, purpose, user_id, mfa_token_hash, device_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [c.challenge, c.purpose, c.userId ?? null, c.mfaTokenHash ?? null, c.deviceId ?? null, c.ttlSeconds],
  );
}

/** Spends a challenge (deleted whatever follows: single use); undefined when unknown or expired. */
export async function takeChallenge(q: Queryable, challenge: string): Promise<ChallengeRow | undefined> {
  const { rows } = await q.query<ChallengeRow & { live: boolean }>(
    'DELETE FROM webauthn_challenges WHERE challenge = $1 RETURNING *, expires_at > now() AS live',
    [challenge],
  );
  const r = rows[0];
  if (!r?.live) return undefined;
  const { live: _live, ...row } = r;
  return row;
}
