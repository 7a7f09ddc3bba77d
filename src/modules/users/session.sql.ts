import type { Queryable } from '../../storage/db.ts';
import { sql, type Param, type Sql } from '../../storage/sql.ts';

// The users module's parts of auth's sign-in, refresh and step-up statements (the sign-in's write: sign-in.sql.ts).
// Auth composes them into its own statements, so no part costs a statement of its own.

/** The user row `userExpr` names (SQL over the caller's columns) as JSON, null when none (a scalar subquery). */
export const userJsonSql = (userExpr: string): string => `(SELECT to_json(u) FROM users u WHERE u.id = ${userExpr})`;

/**
 * The user a password sign-in names, as a subquery for the caller's FROM: columns `id`, `json` (the row as JSON) and
 * `version` (the row's `xmin` as text: a later statement can tell whether the row changed since). By email (already
 * lower-cased) or by username (case-insensitive).
 */
export const signInUserSql = (by: 'email' | 'username', identifier: string): Sql =>
  sql`SELECT u.id, to_json(u) AS json, u.xmin::text AS version FROM users u
        WHERE ${by === 'email' ? sql`u.email = ${identifier}` : sql`lower(u.username) = lower(${identifier})`}`;

/** The user's failed attempts reset, as the WITH item `reset`, when the earlier WITH item `onlyIf` returns a row. */
export const resetFailedAttemptsItem = (a: { userId: Param | string; onlyIf: string }): Sql =>
  sql`reset AS (UPDATE users SET failed_attempts = 0
                 WHERE id = ${a.userId} AND failed_attempts <> 0 AND EXISTS (SELECT 1 FROM ${sql.raw(a.onlyIf)}))`;

/**
 * Replaces a password hash by a rehash of the same password (an imported format replaced by argon2id at sign-in), in
 * one statement. The user is named in the transaction-local setting gatehouse.password_rehash first, so the trigger of
 * migration 0031 keeps password_changed_at: the password itself did not change (its expiry clock runs on).
 */
export async function rehashPassword(q: Queryable, userId: string, hash: string): Promise<void> {
  await q.query(
    `WITH marked AS (SELECT set_config('gatehouse.password_rehash', $1::text, true) AS v)
     UPDATE users SET password_hash = $2, updated_at = now() FROM marked WHERE id = $1::uuid AND marked.v IS NOT NULL`,
    [userId, hash],
  );
}
