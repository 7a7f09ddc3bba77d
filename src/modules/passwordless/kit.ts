import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { RateLimiter } from '../limits/index.ts';
import { addFailedAttempt, lockoutRule, type UserRow } from '../users/index.ts';

/**
 * What the sign-in flows need of message delivery (the messaging module's `sendEmail`/`sendSms`): an email or SMS of a template type, sent after the transaction
 * `q` commits (asynchronous, with retries, by the messaging module). `vars` fill the template; `linkParams` are
 * appended to the type's link (its template's redirect URL, else PUBLIC_URL + the type's default path) as `{{link}}`.
 */
export interface Delivery {
  sendEmail(
    q: Queryable,
    m: {
      type: 'ActivateUser' | 'InviteToTenant' | 'MagicLink' | 'OTC';
      to: string | null;
      tenantId?: string | null;
      vars: Record<string, string>;
      linkParams?: Record<string, string>;
    },
  ): Promise<unknown>;
  sendSms(
    q: Queryable,
    m: { type: 'OTC'; to: string; tenantId?: string | null; vars: Record<string, string> },
  ): Promise<unknown>;
}

/** Per-IP and per-identifier limits on requests that send a code or link (429 with retry-after). */
export interface CodeLimits {
  perIp: RateLimiter;
  perIdentifier: RateLimiter;
}

export async function limitRequests(limits: CodeLimits, ip: string | undefined, identifier: string): Promise<void> {
  for (const [key, limiter] of [
    [`ip:${ip ?? 'unknown'}`, limits.perIp],
    [`id:${identifier}`, limits.perIdentifier],
  ] as const) {
    const r = await limiter.hit(key);
    if (r.limited)
      throw new AppError('RATE_LIMITED', `Too many code requests; retry in ${r.retryAfter} s`, undefined, {
        'retry-after': String(r.retryAfter),
      });
  }
}

/**
 * A wrong code counts like a wrong password: against the lockout policy of the user's active account (else the
 * environment's); reaching it locks the user. Answers whether the user is now locked.
 */
export async function countFailure(q: Queryable, passwords: PasswordService, user: UserRow): Promise<boolean> {
  const policy = await passwords.lockoutPolicy(q, user.active_tenant_id ?? undefined);
  const counted = await addFailedAttempt(q, user.id, lockoutRule(policy));
  if (!counted?.lockedNow) return false;
  await passwords.lockedOut(q, user);
  return true;
}

/** Masks a phone number for answers: the country prefix and the last two digits stay. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  if (digits.length < 5) return '****';
  return `+${digits.slice(0, 1)}${'*'.repeat(digits.length - 3)}${digits.slice(-2)}`;
}

/** Client facts a flow passes to the sign-in. */
export interface Client {
  ip?: string;
  userAgent?: string;
  /** The request's Cookie header (the MFA gate reads its remember-device cookie). */
  cookie?: string;
}
