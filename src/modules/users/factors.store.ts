import type { Queryable } from '../../storage/db.ts';
import { primaryPhoneSql } from './phones.store.ts';

// The user row's sign-in factor columns that other modules' flows write: the MFA enrolment, the MFA factors a user
// migration brought (mfa), and the failed attempts a wrong one-time code counts (passwordless).

export async function setMfaEnrolled(q: Queryable, userId: string, enrolled: boolean): Promise<void> {
  await q.query('UPDATE users SET mfa_enrolled = $2, updated_at = now() WHERE id = $1', [userId, enrolled]);
}

/** The migrated factors, the user row locked; undefined when no such user. */
export async function lockMigratedFactors(
  q: Queryable,
  userId: string,
): Promise<{ secret: string | null; phone_type: string | null; phone: string | null } | undefined> {
  const { rows } = await q.query<{ secret: string | null; phone_type: string | null; phone: string | null }>(
    `SELECT u.authenticator_mfa_secret_enc AS secret, u.phone_number_type AS phone_type,
            ${primaryPhoneSql('u.id')} AS phone
       FROM users u WHERE u.id = $1 FOR UPDATE OF u`,
    [userId],
  );
  return rows[0];
}

/** The migrated factors cleared once they became devices; the user counts as enrolled. */
export async function clearMigratedFactors(q: Queryable, userId: string): Promise<void> {
  await q.query(
    `UPDATE users SET authenticator_mfa_secret_enc = NULL,
            phone_number_type = CASE WHEN phone_number_type = 'mfa' THEN NULL ELSE phone_number_type END,
            mfa_enrolled = true
      WHERE id = $1`,
    [userId],
  );
}

/** One more failed attempt; answers the count (undefined: no such user). */
export async function addFailedAttempt(q: Queryable, userId: string): Promise<number | undefined> {
  const { rows } = await q.query<{ failed_attempts: number }>(
    'UPDATE users SET failed_attempts = failed_attempts + 1 WHERE id = $1 RETURNING failed_attempts',
    [userId],
  );
  return rows[0]?.failed_attempts;
}
