import type { Queryable } from '../../storage/db.ts';
import * as store from './factors.store.ts';

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
/** Counts a failed attempt on the user row; answers the new count (undefined: no such user). */
export const addFailedAttempt = (q: Queryable, userId: string) => store.addFailedAttempt(q, userId);
