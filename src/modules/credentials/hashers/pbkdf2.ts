import { pbkdf2 as pbkdf2Cb } from 'node:crypto';
import { bytesEqual, decodeImported, encodeImported, int, intIn, isPrefixed } from './imported.ts';
import type { Hasher } from './types.ts';

/** The encodings of interface rule 4, as Node's Buffer names them. */
export const PBKDF2_ENCODINGS = [
  'ascii',
  'utf8',
  'utf-8',
  'utf16le',
  'ucs2',
  'ucs-2',
  'base64',
  'latin1',
  'binary',
  'hex',
] as const;
const DIGESTS = ['sha1', 'sha224', 'sha256', 'sha384', 'sha512'];

type Enc = (typeof PBKDF2_ENCODINGS)[number];
const enc = (v: unknown): Enc => (v === undefined ? 'hex' : (v as Enc));

/**
 * pbkdf2 (wire.md section 8): `passwordHash` is `salt + saltSeparator + key`. The salt is decoded with
 * `saltEncodingType` (or used as its UTF-8 text with `saltInput: "text"`), the key was written with `keyEncodingType`
 * (both default hex). Text encodings are lossy (Buffer#toString replaces invalid UTF-8, drops the high bit for ascii),
 * so the derived key is written the same way and both sides are compared as the bytes of that text.
 */
export const pbkdf2: Hasher = {
  id: 'pbkdf2',
  matches: isPrefixed('pbkdf2'),
  async verify(password, stored) {
    const d = decodeImported('pbkdf2', stored);
    if (!d || check(d.config, d.hash)) return false;
    const c = d.config;
    const sep = String(c.saltSeparator);
    const cut = d.hash.indexOf(sep);
    const saltText = d.hash.slice(0, cut);
    const keyText = d.hash.slice(cut + sep.length);
    const salt =
      c.saltInput === 'text' ? Buffer.from(saltText, 'utf8') : Buffer.from(saltText, enc(c.saltEncodingType));
    const keyEnc = enc(c.keyEncodingType);
    try {
      const derived = await new Promise<Buffer>((resolve, reject) =>
        pbkdf2Cb(password, salt, int(c.iterations)!, int(c.keyLen)!, String(c.digest).toLowerCase(), (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      );
      return bytesEqual(Buffer.from(derived.toString(keyEnc), keyEnc), Buffer.from(keyText, keyEnc));
    } catch {
      return false;
    }
  },
  imports: {
    type: 'pbkdf2',
    required: ['saltSeparator', 'iterations', 'keyLen', 'digest'],
    check: (c, h) => check(c ?? {}, h),
    store: (h, c) => encodeImported('pbkdf2', c, h),
  },
};

function check(c: Record<string, unknown>, hash: string): string | undefined {
  if (typeof c.saltSeparator !== 'string' || c.saltSeparator === '')
    return 'passwordHashConfig.saltSeparator must be a non-empty string';
  const problem = intIn('iterations', c.iterations, 1, 10_000_000) ?? intIn('keyLen', c.keyLen, 1, 512);
  if (problem) return problem;
  if (typeof c.digest !== 'string' || !DIGESTS.includes(c.digest.toLowerCase()))
    return `passwordHashConfig.digest must be one of ${DIGESTS.join(', ')}`;
  for (const k of ['keyEncodingType', 'saltEncodingType'] as const) {
    if (c[k] !== undefined && !PBKDF2_ENCODINGS.includes(c[k] as Enc))
      return `passwordHashConfig.${k} must be one of ${PBKDF2_ENCODINGS.join(', ')}`;
  }
  if (c.saltInput !== undefined && c.saltInput !== 'text' && c.saltInput !== 'decoded')
    return 'passwordHashConfig.saltInput must be "text" or "decoded"';
  const cut = hash.indexOf(c.saltSeparator);
  if (cut < 0 || cut + c.saltSeparator.length >= hash.length)
    return `passwordHash must be salt + saltSeparator (${c.saltSeparator}) + key`;
  return undefined;
}
