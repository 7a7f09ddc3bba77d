/**
 * One stored-hash format. `matches` recognises the format from the stored string alone (cheap, no secrets);
 * `verify` checks a password against it and never throws (a malformed hash is simply `false`).
 */
export interface Hasher {
  id: string;
  matches(stored: string): boolean;
  verify(password: string, stored: string): Promise<boolean>;
}
