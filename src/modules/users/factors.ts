import type { Queryable } from '../../storage/db.ts';
import * as store from './factors.store.ts';
import type { LockoutRule } from './factors.store.ts';

export type { LockoutRule };

// The sign-in factor columns of the user row, for the MFA and passwordless flows in their own transaction (SQL in
// factors.store.ts).

/** Sets whether the user counts as enrolled in MFA. */
export const setMfaEnrolled = (q: Queryable, userId: string, enrolled: boolean) =>
  store.setMfaEnrolled(q, userId, enrolled);
/**
 * The MFA factors a user migration brought (the sealed authenticator secret, the phone number type and the primary
 * number), the user row locked so two concurrent sign-ins adopt them once; undefined when no such user.
 */
export const lockMigratedFactors = (q: Queryable, userId: string) => store.lockMigratedFactors(q, userId);
/** Clears the migrated factors once they became devices, and marks the user enrolled. */
export const clearMigratedFactors = (q: Queryable, userId: string) => store.clearMigratedFactors(q, userId);
/**
 * Counts a failed attempt on the user row and locks the user when the rule's count is reached, atomically (one
 * statement); answers the new count and whether this attempt locked the user (undefined: no such user).
 */
export const addFailedAttempt = (q: Queryable, userId: string, rule?: LockoutRule) =>
  store.addFailedAttempt(q, userId, rule);

/** A lockout policy (credentials module) as the rule of a failure counted now. */
export function lockoutRule(p: { enabled: boolean; maxAttempts: number; lockDurationSeconds: number | null }) {
  const lockedUntil = p.lockDurationSeconds ? new Date(Date.now() + p.lockDurationSeconds * 1000) : null;
  return { enabled: p.enabled, maxAttempts: p.maxAttempts, lockedUntil } satisfies LockoutRule;
}
