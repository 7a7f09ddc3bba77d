import { createHmac, randomInt } from 'node:crypto';
import { newId, safeEqual } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { RateLimiter } from '../limits/index.ts';
import * as store from './store.ts';

export const MAX_CODE_ATTEMPTS = 5;

/** Short numeric codes: HMAC-SHA256 under a KEK-derived key, bound to the row id; compared in constant time. */
export function createRecoveryCodes(kek: Buffer) {
  const key = createHmac('sha256', kek).update('gatehouse recovery codes v1').digest();
  const hash = (id: string, code: string) => createHmac('sha256', key).update(`${id}:${code}`).digest('hex');

  return {
    async issue(
      q: Queryable,
      a: { purpose: store.CodeRow['purpose']; userId: string; target?: string | null; ttlSeconds: number },
    ): Promise<{ id: string; code: string }> {
      const id = newId();
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await store.insertCode(q, {
        id,
        purpose: a.purpose,
        userId: a.userId,
        target: a.target ?? null,
        codeHash: hash(id, code),
        ttlSeconds: a.ttlSeconds,
      });
      return { id, code };
    },

    /**
     * Judges a code against a row (already locked by the caller). A wrong code counts an attempt and the row is burned
     * at MAX_CODE_ATTEMPTS. Answers the error to throw AFTER the transaction commits (so the count sticks), or null.
     */
    async check(q: Queryable, row: store.CodeRow | undefined, code: string): Promise<AppError | null> {
      if (!row) return new AppError('OTC_INVALID', 'The code is wrong or the session is unknown');
      if (row.used_at) return new AppError('OTC_EXPIRED', 'The code was already used or replaced; request a new one');
      if (row.expires_at <= new Date()) return new AppError('OTC_EXPIRED', 'The code has expired; request a new one');
      const given = /^\d{6}$/.test(code) ? code : '';
      if (safeEqual(hash(row.id, given), row.code_hash)) return null;
      const burn = row.attempts + 1 >= MAX_CODE_ATTEMPTS;
      await store.countAttempt(q, row.id, burn);
      return burn
        ? new AppError(
            'OTC_ATTEMPTS_EXCEEDED',
            `Too many wrong codes (${MAX_CODE_ATTEMPTS}); this code no longer works, request a new one`,
          )
        : new AppError('OTC_INVALID', 'The code is wrong');
    },
  };
}
export type RecoveryCodes = ReturnType<typeof createRecoveryCodes>;

/** Throws 429 with retry-after when a request key is over its limit. */
export async function limit(limiter: RateLimiter, key: string, what: string, q?: Queryable): Promise<void> {
  const r = await limiter.hit(key, q);
  if (r.limited)
    throw new AppError('RATE_LIMITED', `Too many ${what} requests; retry in ${r.retryAfter} s`, undefined, {
      'retry-after': String(r.retryAfter),
    });
}
