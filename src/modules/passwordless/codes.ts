import { createHmac, randomInt } from 'node:crypto';
import { newId, randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';

/**
 * One-time secrets of the sign-in flows (activation, invitation, passwordless). A link token has 256 random bits and
 * is stored as SHA-256; a short code (6 digits) is stored as HMAC-SHA256 under a key derived from the KEK and bound
 * to its row, so the table alone does not give the codes away. Each is single use, expires, and a code row is burned
 * after MAX_CODE_ATTEMPTS wrong tries. A new secret of the same purpose (and account) replaces the earlier ones.
 */
export type CodePurpose = 'activation' | 'invitation' | 'magiclink' | 'code' | 'smscode';
export const MAX_CODE_ATTEMPTS = 5;

export interface CodeRow {
  id: string;
  purpose: CodePurpose;
  user_id: string;
  tenant_id: string | null;
  token_hash: string | null;
  code_hash: string | null;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
}

/** What a check found: the row when it may be used, else why not (`invalid` → 400, `expired`/`used` → 410). */
export type CheckResult =
  | { ok: true; row: CodeRow }
  | { ok: false; reason: 'invalid' | 'expired' | 'used'; row?: CodeRow; burned?: boolean };

export type CodeBook = ReturnType<typeof createCodeBook>;

export function createCodeBook(kek: Buffer) {
  const hmacKey = createHmac('sha256', kek).update('gatehouse one-time codes v1').digest();
  const codeHash = (rowId: string, code: string) =>
    createHmac('sha256', hmacKey).update(`${rowId}:${code}`).digest('hex');

  return {
    /**
     * Issues a new secret for a user and purpose (per account for invitations), making earlier unused ones of the
     * same purpose unusable. Answers the plain values, which go only into the message.
     */
    async issue(
      q: Queryable,
      a: {
        purpose: CodePurpose;
        userId: string;
        tenantId?: string;
        ttlSeconds: number;
        link?: boolean;
        code?: boolean;
      },
    ): Promise<{ id: string; token?: string; code?: string; expiresAt: Date }> {
      const id = newId();
      const token = a.link ? randomSecret(32) : undefined;
      const code = a.code ? String(randomInt(0, 1_000_000)).padStart(6, '0') : undefined;
      const expiresAt = new Date(Date.now() + a.ttlSeconds * 1000);
      await q.query(
        `UPDATE one_time_codes SET used_at = now()
         WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL AND coalesce(tenant_id, '') = coalesce($3, '')`,
        [a.userId, a.purpose, a.tenantId ?? null],
      );
      await q.query(
        `INSERT INTO one_time_codes (id, purpose, user_id, tenant_id, token_hash, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          id,
          a.purpose,
          a.userId,
          a.tenantId ?? null,
          token ? sha256Hex(token) : null,
          code ? codeHash(id, code) : null,
          expiresAt,
        ],
      );
      return { id, token, code, expiresAt };
    },

    /** Finds a link token (any purpose in `purposes`), locks its row and says whether it may be used. Does not consume it. */
    async checkToken(q: Queryable, purposes: CodePurpose[], token: string): Promise<CheckResult> {
      if (!token || token.length > 512) return { ok: false, reason: 'invalid' };
      const { rows } = await q.query<CodeRow>(
        'SELECT * FROM one_time_codes WHERE token_hash = $1 AND purpose = ANY($2::text[]) FOR UPDATE',
        [sha256Hex(token), purposes],
      );
      return judge(rows[0]);
    },

    /**
     * Checks a short code against the user's newest secret of that purpose (of that account, when given; else of any).
     * A wrong code counts an attempt on that row; the row is burned at MAX_CODE_ATTEMPTS. Compared in constant time.
     */
    async checkCode(
      q: Queryable,
      purpose: CodePurpose,
      userId: string,
      code: string,
      tenantId?: string,
    ): Promise<CheckResult> {
      if (!/^\d{6}$/.test(code)) code = '';
      const { rows } = await q.query<CodeRow>(
        `SELECT * FROM one_time_codes WHERE user_id = $1 AND purpose = $2 AND code_hash IS NOT NULL AND ($3::text IS NULL OR tenant_id = $3)
         ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [userId, purpose, tenantId ?? null],
      );
      const row = rows[0];
      const verdict = judge(row);
      if (!verdict.ok) return verdict;
      if (safeEqual(codeHash(row!.id, code), row!.code_hash!)) return verdict;
      const attempts = row!.attempts + 1;
      const burned = attempts >= MAX_CODE_ATTEMPTS;
      await q.query(`UPDATE one_time_codes SET attempts = $2${burned ? ', used_at = now()' : ''} WHERE id = $1`, [
        row!.id,
        attempts,
      ]);
      return { ok: false, reason: 'invalid', row, burned };
    },

    /** Marks a checked row used (single use). */
    async consume(q: Queryable, rowId: string): Promise<void> {
      await q.query('UPDATE one_time_codes SET used_at = now() WHERE id = $1 AND used_at IS NULL', [rowId]);
    },

    /** The newest row of a user and purpose (and account), used or not. */
    async latest(q: Queryable, purpose: CodePurpose, userId: string, tenantId?: string): Promise<CodeRow | undefined> {
      const { rows } = await q.query<CodeRow>(
        `SELECT * FROM one_time_codes WHERE user_id = $1 AND purpose = $2 AND coalesce(tenant_id, '') = coalesce($3, '') ORDER BY created_at DESC LIMIT 1`,
        [userId, purpose, tenantId ?? null],
      );
      return rows[0];
    },
  };
}

/** Marks the user's unspent codes of `purpose` used, in every account (no secret needed: nothing is checked). */
export async function voidCodes(q: Queryable, userId: string, purpose: CodePurpose): Promise<void> {
  await q.query('UPDATE one_time_codes SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL', [
    userId,
    purpose,
  ]);
}

function judge(row: CodeRow | undefined): CheckResult {
  if (!row) return { ok: false, reason: 'invalid' };
  if (row.used_at) return { ok: false, reason: 'used', row };
  if (row.expires_at <= new Date()) return { ok: false, reason: 'expired', row };
  return { ok: true, row };
}

/** Turns a failed check into the error the client sees: 400 for a wrong or unknown secret, 410 for an expired or used one. */
export function checkError(r: Exclude<CheckResult, { ok: true }>, what: string): AppError {
  if (r.reason === 'invalid') {
    return new AppError(
      'CODE_INVALID',
      r.burned ? `The ${what} is wrong; too many wrong attempts, request a new one` : `The ${what} is invalid`,
    );
  }
  return new AppError(
    'CODE_EXPIRED',
    `The ${what} has ${r.reason === 'used' ? 'already been used' : 'expired'}; request a new one`,
  );
}
