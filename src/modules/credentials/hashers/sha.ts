import { createHash } from 'node:crypto';
import { bytesEqual, decodeImported, encodeImported, isPrefixed } from './imported.ts';
import type { Hasher } from './types.ts';

/**
 * sha256 / sha1 (wire.md section 8): the hex digest of the UTF-8 password; or, with config
 * `{salt, saltPosition: prefix|suffix, encoding: hex|base64}`, the digest of the salt text (UTF-8) joined before or
 * after the password, written in `encoding` (default hex). Fast digests: rehashed to argon2id at the first sign-in.
 */
function shaHasher(algo: 'sha256' | 'sha1'): Hasher {
  const size = algo === 'sha256' ? 32 : 20;
  const check = (c: Record<string, unknown> | undefined, hash: string): string | undefined => {
    const cfg = c ?? {};
    if (cfg.salt !== undefined && typeof cfg.salt !== 'string') return 'passwordHashConfig.salt must be a string';
    if (cfg.salt !== undefined && cfg.saltPosition !== 'prefix' && cfg.saltPosition !== 'suffix')
      return 'passwordHashConfig.saltPosition must be prefix or suffix';
    if (cfg.encoding !== undefined && cfg.encoding !== 'hex' && cfg.encoding !== 'base64')
      return 'passwordHashConfig.encoding must be hex or base64';
    const bytes = decodeDigest(hash, cfg.encoding === 'base64' ? 'base64' : 'hex');
    if (!bytes || bytes.length !== size)
      return `passwordHash must be a ${algo} digest (${size} bytes) in ${cfg.encoding === 'base64' ? 'base64' : 'hex'}`;
    return undefined;
  };
  return {
    id: algo,
    matches: isPrefixed(algo),
    async verify(password, stored) {
      const d = decodeImported(algo, stored);
      if (!d || check(d.config, d.hash)) return false;
      const salt = typeof d.config.salt === 'string' ? d.config.salt : '';
      const input = d.config.saltPosition === 'suffix' ? password + salt : salt + password;
      const digest = createHash(algo).update(input, 'utf8').digest();
      return bytesEqual(digest, decodeDigest(d.hash, d.config.encoding === 'base64' ? 'base64' : 'hex')!);
    },
    imports: { type: algo, required: [], check, store: (h, c) => encodeImported(algo, c, h) },
  };
}

function decodeDigest(text: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  if (encoding === 'hex') return /^([0-9a-fA-F]{2})+$/.test(text) ? Buffer.from(text, 'hex') : undefined;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : undefined;
}

export const sha256 = shaHasher('sha256');
export const sha1 = shaHasher('sha1');
