import type { Queryable } from '../../storage/db.ts';

export type ResetReason = 'email' | 'sms' | 'vendor-link' | 'migrated-without-password' | 'password-expired';

export interface ResetTokenRow {
  token_hash: string;
  user_id: string;
  reason: string;
  expires_at: Date;
  used_at: Date | null;
}

export interface CodeRow {
  id: string;
  purpose: 'reset-sms' | 'verify-email';
  user_id: string;
  target: string | null;
  code_hash: string;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
}

export interface VerifyTokenRow {
  token_hash: string;
  user_id: string;
  email: string;
  expires_at: Date;
  used_at: Date | null;
}

// -- reset link tokens (table password_reset_tokens of 0010, shared with the sign-in of migrated users) --

export async function insertResetToken(
  q: Queryable,
  t: { tokenHash: string; userId: string; reason: ResetReason; ttlSeconds: number },
): Promise<void> {
  await q.query(
    `INSERT INTO password_reset_tokens (token_hash, user_id, reason, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [t.tokenHash, t.userId, t.reason, t.ttlSeconds],
  );
}

export async function findResetToken(
  q: Queryable,
  tokenHash: string,
  lock = false,
): Promise<ResetTokenRow | undefined> {
  const { rows } = await q.query<ResetTokenRow>(
    `SELECT * FROM password_reset_tokens WHERE token_hash = $1${lock ? ' FOR UPDATE' : ''}`,
    [tokenHash],
  );
  return rows[0];
}

/** Marks every unused reset token of the user used (after a reset, or when a newer emailed link supersedes them). */
export async function useResetTokens(q: Queryable, userId: string, reasons?: ResetReason[]): Promise<void> {
  await q.query(
    `UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL AND ($2::text[] IS NULL OR reason = ANY($2::text[]))`,
    [userId, reasons ?? null],
  );
}

// -- short codes --

export async function insertCode(
  q: Queryable,
  c: {
    id: string;
    purpose: CodeRow['purpose'];
    userId: string;
    target: string | null;
    codeHash: string;
    ttlSeconds: number;
  },
): Promise<void> {
  // A new code supersedes the user's earlier unused ones of the same purpose.
  await q.query(`UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`, [
    c.userId,
    c.purpose,
  ]);
  await q.query(
    `INSERT INTO recovery_codes (id, purpose, user_id, target, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [c.id, c.purpose, c.userId, c.target, c.codeHash, c.ttlSeconds],
  );
}

export async function findCode(q: Queryable, id: string, purpose: CodeRow['purpose']): Promise<CodeRow | undefined> {
  const { rows } = await q.query<CodeRow>('SELECT * FROM recovery_codes WHERE id = $1 AND purpose = $2 FOR UPDATE', [
    id,
    purpose,
  ]);
  return rows[0];
}

export async function latestCode(
  q: Queryable,
  userId: string,
  purpose: CodeRow['purpose'],
): Promise<CodeRow | undefined> {
  const { rows } = await q.query<CodeRow>(
    'SELECT * FROM recovery_codes WHERE user_id = $1 AND purpose = $2 ORDER BY created_at DESC LIMIT 1 FOR UPDATE',
    [userId, purpose],
  );
  return rows[0];
}

export async function countAttempt(q: Queryable, id: string, burn: boolean): Promise<void> {
  await q.query(`UPDATE recovery_codes SET attempts = attempts + 1${burn ? ', used_at = now()' : ''} WHERE id = $1`, [
    id,
  ]);
}

export async function useCode(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE recovery_codes SET used_at = now() WHERE id = $1', [id]);
}

// -- email verification links --

export async function insertVerifyToken(
  q: Queryable,
  t: { tokenHash: string; userId: string; email: string; ttlSeconds: number },
): Promise<void> {
  await q.query('UPDATE email_verification_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [
    t.userId,
  ]);
  await q.query(
    `INSERT INTO email_verification_tokens (token_hash, user_id, email, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [t.tokenHash, t.userId, t.email, t.ttlSeconds],
  );
}

export async function findVerifyToken(q: Queryable, tokenHash: string): Promise<VerifyTokenRow | undefined> {
  const { rows } = await q.query<VerifyTokenRow>(
    'SELECT * FROM email_verification_tokens WHERE token_hash = $1 FOR UPDATE',
    [tokenHash],
  );
  return rows[0];
}

/**
 * The user's email changed: every proof sent by email before is void — verification links and codes, and the emailed
 * reset links (sent to an address the user may no longer control).
 */
export async function forgetEmailProofs(q: Queryable, userId: string): Promise<void> {
  await useVerifyTokens(q, userId);
  await q.query(
    `UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND purpose = 'verify-email' AND used_at IS NULL`,
    [userId],
  );
  await useResetTokens(q, userId, ['email']);
}

export async function useVerifyTokens(q: Queryable, userId: string): Promise<void> {
  await q.query('UPDATE email_verification_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [
    userId,
  ]);
}
