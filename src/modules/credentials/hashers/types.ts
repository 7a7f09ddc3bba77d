/**
 * One stored-hash format. `matches` recognises the format from the stored string alone (cheap, no secrets);
 * `verify` checks a password against it and never throws (a malformed hash is simply `false`).
 *
 * An imported format (wire.md section 8) also has `imports`: its `passwordHashType`, the `passwordHashConfig` keys it
 * needs, a check of the config and hash at import time, and `store`, which turns the imported hash and config into the
 * one self-describing string kept in `users.password_hash`.
 */
export interface Hasher {
  id: string;
  matches(stored: string): boolean;
  verify(password: string, stored: string): Promise<boolean>;
  imports?: ImportSpec;
}

export interface ImportSpec {
  /** `passwordHashType` of the migration routes. */
  type: string;
  /** Keys `passwordHashConfig` must hold (a 400 names the first missing one). */
  required: readonly string[];
  /** A problem with the config or hash, as a message naming the field and the rule; undefined when usable. */
  check(config: Record<string, unknown> | undefined, hash: string): string | undefined;
  /** The string to store (self-describing: `matches` recognises it). */
  store(hash: string, config: Record<string, unknown> | undefined): string;
}
