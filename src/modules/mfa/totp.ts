import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';

/**
 * TOTP (RFC 6238) over the `otpauth` library: SHA-1, 6 digits, 30 s steps, as every authenticator app expects.
 * Comparison is ours: the code of each step of the window is hashed and compared with timingSafeEqual, and the step
 * that matched is answered so the caller can refuse a step at or below the last one accepted (single use).
 */
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;

export type TotpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512';

export const newTotpSecret = (): string => new OTPAuth.Secret({ size: 20 }).base32;

export const stepAt = (ms: number, period = TOTP_PERIOD): number => Math.floor(ms / 1000 / period);

/** The code of `secret` (base32) at a step, through the library (also used by the tests against RFC 6238 vectors). */
export function totpCode(
  secret: string | OTPAuth.Secret,
  step: number,
  o: { algorithm?: TotpAlgorithm; digits?: number } = {},
): string {
  const s = typeof secret === 'string' ? OTPAuth.Secret.fromBase32(secret) : secret;
  return OTPAuth.HOTP.generate({
    secret: s,
    algorithm: o.algorithm ?? 'SHA1',
    digits: o.digits ?? TOTP_DIGITS,
    counter: step,
  });
}

const digest = (v: string) => createHash('sha256').update(v).digest();

/** Constant-time equality of two strings of any length (compares their SHA-256). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The step within ±`window` of `now` whose code equals `code`, or undefined. Every step of the window is computed and
 * compared, whether or not an earlier one matched.
 */
export function matchTotp(secret: string, code: string, now = Date.now(), window = 1): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const current = stepAt(now);
  const key = OTPAuth.Secret.fromBase32(secret); // decoded once for the whole window
  let matched: number | undefined;
  for (let step = current - window; step <= current + window; step++) {
    if (sameSecret(totpCode(key, step), code) && matched === undefined) matched = step;
  }
  return matched;
}

export function otpauthUri(secret: string, issuer: string, label: string): string {
  return new OTPAuth.TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: OTPAuth.Secret.fromBase32(secret),
  }).toString();
}

export const qrDataUrl = (text: string): Promise<string> =>
  QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 1 });

/** A numeric one-time code of `digits` digits (SMS and email factors). */
export const numericCode = (digits = 6): string => String(randomInt(0, 10 ** digits)).padStart(digits, '0');

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
/** A recovery code: 12 characters of a 31-letter alphabet (about 59 bits), shown as xxxx-xxxx-xxxx. */
export function recoveryCode(): string {
  let s = '';
  for (let i = 0; i < 12; i++) s += RECOVERY_ALPHABET[randomInt(0, RECOVERY_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8)}`;
}
/** Recovery codes are compared case-insensitively and without separators or spaces. */
export const normalizeRecovery = (code: string): string => code.toLowerCase().replace(/[\s-]/g, '');
