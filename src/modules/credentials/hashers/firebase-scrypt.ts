import { createCipheriv } from 'node:crypto';
import { bytesEqual, decodeImported, encodeImported, int, intIn, isPrefixed } from './imported.ts';
import { scryptBytes } from './scrypt.ts';
import type { Hasher } from './types.ts';

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * firebase-scrypt (wire.md section 8): `passwordHash` is `salt + saltSeparator + hash`, all standard base64 as the
 * exporting system writes them; config `{memCost, rounds, saltSeparator, signerKey}` (separator and signer key base64).
 * key = scrypt(password, salt ‖ separator, N=2^memCost, r=rounds, p=1, 64)[0..32]; hash = AES-256-CTR(key, zero IV)
 * of the signer key.
 */
export const firebaseScrypt: Hasher = {
  id: 'firebase-scrypt',
  matches: isPrefixed('firebase-scrypt'),
  async verify(password, stored) {
    const d = decodeImported('firebase-scrypt', stored);
    if (!d || check(d.config, d.hash)) return false;
    const parts = split(d.config, d.hash)!;
    try {
      const derived = await scryptBytes(password, Buffer.concat([parts.salt, parts.sep]), 64, {
        N: 2 ** int(d.config.memCost)!,
        r: int(d.config.rounds)!,
        p: 1,
      });
      const cipher = createCipheriv('aes-256-ctr', derived.subarray(0, 32), Buffer.alloc(16));
      const computed = Buffer.concat([
        cipher.update(Buffer.from(String(d.config.signerKey), 'base64')),
        cipher.final(),
      ]);
      return bytesEqual(computed, parts.hash);
    } catch {
      return false;
    }
  },
  imports: {
    type: 'firebase-scrypt',
    required: ['memCost', 'rounds', 'saltSeparator', 'signerKey'],
    check: (c, h) => check(c ?? {}, h),
    store: (h, c) => encodeImported('firebase-scrypt', c, h),
  },
};

/** The separator is matched as its base64 text; the salt is the base64 before it (first occurrence after a full salt). */
function split(c: Record<string, unknown>, hash: string): { salt: Buffer; sep: Buffer; hash: Buffer } | undefined {
  const sepText = String(c.saltSeparator);
  // A base64 salt ends at a 4-character boundary; look for the separator only there.
  for (let i = 4; i + sepText.length <= hash.length; i += 4) {
    if (hash.startsWith(sepText, i) && B64.test(hash.slice(0, i)) && B64.test(hash.slice(i + sepText.length))) {
      return {
        salt: Buffer.from(hash.slice(0, i), 'base64'),
        sep: Buffer.from(sepText, 'base64'),
        hash: Buffer.from(hash.slice(i + sepText.length), 'base64'),
      };
    }
  }
  return undefined;
}

function check(c: Record<string, unknown>, hash: string): string | undefined {
  const problem = intIn('memCost', c.memCost, 1, 20) ?? intIn('rounds', c.rounds, 1, 32);
  if (problem) return problem;
  if (typeof c.saltSeparator !== 'string' || c.saltSeparator === '' || !B64.test(c.saltSeparator))
    return 'passwordHashConfig.saltSeparator must be standard base64';
  if (typeof c.signerKey !== 'string' || c.signerKey === '' || !B64.test(c.signerKey))
    return 'passwordHashConfig.signerKey must be standard base64';
  if (!split(c, hash)) return 'passwordHash must be base64 salt + saltSeparator + base64 hash';
  return undefined;
}
