import { argon2 } from './argon2.ts';
import type { Hasher } from './types.ts';

export type { Hasher } from './types.ts';
export { argon2, argon2NeedsRehash, hashArgon2id, CURRENT as ARGON2_PARAMETERS } from './argon2.ts';

/**
 * Every stored-hash format Gatehouse can verify, first match wins. New hashes are always argon2id; a password that
 * verifies against any other entry (or against argon2 with other parameters) is reported `needsRehash`, and the
 * caller stores a fresh argon2id hash after the successful sign-in (the "verify with the legacy format, then rehash"
 * approach).
 *
 * Imported formats (wire.md section 8: bcrypt, scrypt, firebase-scrypt, pbkdf2, sha256/sha1) join this table as
 * further entries. Those whose hash is not self-describing are stored with a self-describing prefix that carries their
 * configuration (for example `$gh-scrypt$<base64url JSON config>$<hash as imported>`), so that a stored hash stays one
 * string and `matches` can recognise it without another column.
 */
export const HASHERS: readonly Hasher[] = [argon2];

export function hasherFor(stored: string): Hasher | undefined {
  return HASHERS.find((h) => h.matches(stored));
}
