import { hash as argon2Hash, parseOptions, verify as argon2Verify } from '@node-rs/argon2';
import type { Hasher } from './types.ts';

/**
 * The parameters new hashes get: argon2id, 19 MiB, 2 passes, 1 lane (OWASP Password Storage Cheat Sheet), 16-byte
 * salt and 32-byte output (the library's defaults). @node-rs/argon2 computes on the libuv thread pool, so hashing and
 * verifying never block the event loop.
 *
 * The numeric codes are those of the library's `Algorithm` and `Version` enums: they are declared `const enum`, which
 * has no runtime object under tsx, so the values are spelled out here.
 */
export const ARGON2ID = 2;
export const ARGON2_V13 = 1;
export const CURRENT = { memoryCost: 19456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

const PHC = /^\$argon2(id|i|d)\$/;

export async function hashArgon2id(password: string): Promise<string> {
  return argon2Hash(password, { algorithm: ARGON2ID, version: ARGON2_V13, ...CURRENT });
}

/** True unless `stored` is an argon2id v1.3 PHC string with exactly the current parameters. */
export function argon2NeedsRehash(stored: string): boolean {
  try {
    const p = parseOptions(stored);
    return !(
      p.algorithm === ARGON2ID &&
      p.version === ARGON2_V13 &&
      p.memoryCost === CURRENT.memoryCost &&
      p.timeCost === CURRENT.timeCost &&
      p.parallelism === CURRENT.parallelism &&
      p.outputLen === CURRENT.outputLen
    );
  } catch {
    return true;
  }
}

/**
 * Argon2 PHC strings: `$argon2id$`, `$argon2i$` and `$argon2d$`, with the parameters in any order (the library
 * parses them by name), as Gatehouse writes them and as other systems export them (wire.md section 8).
 */
export const argon2: Hasher = {
  id: 'argon2',
  matches: (stored) => PHC.test(stored),
  async verify(password, stored) {
    try {
      return await argon2Verify(stored, password);
    } catch {
      return false; // not decodable: no password matches it
    }
  },
  imports: {
    type: 'argon2',
    required: [],
    check(_config, hash) {
      if (!PHC.test(hash)) return 'passwordHash must be a PHC string $argon2i$, $argon2d$ or $argon2id$';
      try {
        parseOptions(hash);
        return undefined;
      } catch {
        return 'passwordHash is not a valid argon2 PHC string (parameters m, t, p, salt and hash)';
      }
    },
    store: (hash) => hash,
  },
};
