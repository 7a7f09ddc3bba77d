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

/** The lockout rule a failed attempt is counted against. */
export interface LockoutRule {
  enabled: boolean;
  maxAttempts: number;
  /** When a lock made now ends; null: until an administrator or the unlock flow lifts it. */
  lockedUntil: Date | null;
}

/**
 * One more failed attempt, and the lock when it reaches the rule, in one statement: the increment is atomic, so
 * failures arriving at the same moment (on one instance or several) are each counted once and the lock happens at
 * the configured count. `lockedNow` is true for the one attempt that locked the user. Undefined: no such user.
 */
export async function addFailedAttempt(
  q: Queryable,
  userId: string,
  rule?: LockoutRule,
): Promise<{ attempts: number; lockedNow: boolean; lockedUntil: Date | null } | undefined> {
  const { rows } = await q.query<{ attempts: number; locked_now: boolean; locked_until: Date | null }>(
    `WITH before AS (SELECT id, is_locked FROM users WHERE id = $1 FOR UPDATE)
     UPDATE users u
        SET failed_attempts = u.failed_attempts + 1,
            is_locked = u.is_locked OR ($2::boolean AND u.failed_attempts + 1 >= $3::int),
            locked_until = CASE WHEN NOT u.is_locked AND $2::boolean AND u.failed_attempts + 1 >= $3::int
                                THEN $4::timestamptz ELSE u.locked_until END
       FROM before
      WHERE u.id = before.id
  RETURNING u.failed_attempts AS attempts, (u.is_locked AND NOT before.is_locked) AS locked_now, u.locked_until`,
    [userId, rule?.enabled ?? false, rule?.maxAttempts ?? 0, rule?.lockedUntil ?? null],
  );
  const r = rows[0];
  return r && { attempts: r.attempts, lockedNow: r.locked_now, lockedUntil: r.locked_until };
}
