import { scrypt as scryptCb } from 'node:crypto';
import { bytesEqual, decodeImported, encodeImported, int, intIn, isPrefixed, scryptMaxmem } from './imported.ts';
import type { Hasher } from './types.ts';

/** Raw scrypt on the libuv thread pool. */
export function scryptBytes(
  password: Buffer | string,
  salt: Buffer | string,
  keyLen: number,
  o: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password, salt, keyLen, { N: o.N, r: o.r, p: o.p, maxmem: scryptMaxmem(o.N, o.r, o.p) }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

const isPow2 = (n: number) => n > 1 && (n & (n - 1)) === 0;

/**
 * scrypt (wire.md section 8): `passwordHash` is `salt + saltSeparator + key`, the salt the UTF-8 text before the first
 * separator, the key hex; config `{saltSeparator, N, r, p, keyLen}` (keyLen in bytes).
 */
export const scrypt: Hasher = {
  id: 'scrypt',
  matches: isPrefixed('scrypt'),
  async verify(password, stored) {
    const d = decodeImported('scrypt', stored);
    if (!d || check(d.config, d.hash)) return false;
    const sep = String(d.config.saltSeparator);
    const cut = d.hash.indexOf(sep);
    const expected = Buffer.from(d.hash.slice(cut + sep.length), 'hex');
    try {
      const key = await scryptBytes(password, d.hash.slice(0, cut), int(d.config.keyLen)!, {
        N: int(d.config.N)!,
        r: int(d.config.r)!,
        p: int(d.config.p)!,
      });
      return bytesEqual(key, expected);
    } catch {
      return false;
    }
  },
  imports: {
    type: 'scrypt',
    required: ['saltSeparator', 'N', 'r', 'p', 'keyLen'],
    check: (c, h) => check(c ?? {}, h),
    store: (h, c) => encodeImported('scrypt', c, h),
  },
};

function check(c: Record<string, unknown>, hash: string): string | undefined {
  if (typeof c.saltSeparator !== 'string' || c.saltSeparator === '')
    return 'passwordHashConfig.saltSeparator must be a non-empty string';
  const problem =
    intIn('N', c.N, 2, 2 ** 20) ??
    intIn('r', c.r, 1, 32) ??
    intIn('p', c.p, 1, 16) ??
    intIn('keyLen', c.keyLen, 1, 512);
  if (problem) return problem;
  if (!isPow2(int(c.N)!)) return 'passwordHashConfig.N must be a power of two';
  if (128 * int(c.N)! * int(c.r)! * int(c.p)! > 256 * 1024 * 1024)
    return 'passwordHashConfig: N·r·p needs more than 256 MiB';
  const cut = hash.indexOf(c.saltSeparator);
  if (cut < 0) return `passwordHash must be salt + saltSeparator (${c.saltSeparator}) + key`;
  const key = hash.slice(cut + c.saltSeparator.length);
  if (!/^([0-9a-fA-F]{2})+$/.test(key) || key.length !== 2 * int(c.keyLen)!)
    return `passwordHash: the key after the separator must be ${int(c.keyLen)} bytes in hex`;
  return undefined;
}
