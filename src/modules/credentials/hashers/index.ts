import { argon2 } from './argon2.ts';
import { bcrypt } from './bcrypt.ts';
import { firebaseScrypt } from './firebase-scrypt.ts';
import { pbkdf2 } from './pbkdf2.ts';
import { scrypt } from './scrypt.ts';
import { sha1, sha256 } from './sha.ts';
import type { Hasher } from './types.ts';

export type { Hasher, ImportSpec } from './types.ts';
export { argon2, argon2NeedsRehash, hashArgon2id, CURRENT as ARGON2_PARAMETERS } from './argon2.ts';
export { PBKDF2_ENCODINGS } from './pbkdf2.ts';

/**
 * Every stored-hash format Gatehouse can verify, first match wins. New hashes are always argon2id; a password that
 * verifies against any other entry (or against argon2 with other parameters) is reported `needsRehash`, and the
 * caller stores a fresh argon2id hash after the successful sign-in (the "verify with the legacy format, then rehash"
 * approach).
 *
 * Imported formats (wire.md section 8): bcrypt and argon2 strings describe themselves and are stored as imported;
 * scrypt, firebase-scrypt, pbkdf2, sha256 and sha1 are stored as `$gh-<type>$<base64url JSON config>$<hash as
 * imported>` (see imported.ts), so a stored hash stays one string, carries its per-user `passwordHashConfig`, and
 * `matches` recognises it without another column.
 */
export const HASHERS: readonly Hasher[] = [argon2, bcrypt, scrypt, firebaseScrypt, pbkdf2, sha256, sha1];

export function hasherFor(stored: string): Hasher | undefined {
  return HASHERS.find((h) => h.matches(stored));
}

/** The `passwordHashType` values the migration routes accept, in the interface's order. */
export const IMPORT_TYPES = ['bcrypt', 'scrypt', 'firebase-scrypt', 'pbkdf2', 'argon2', 'sha256', 'sha1'] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];

/** The hasher that imports `passwordHashType` `type`. */
export function importerFor(type: string): Hasher | undefined {
  return HASHERS.find((h) => h.imports?.type === type);
}
