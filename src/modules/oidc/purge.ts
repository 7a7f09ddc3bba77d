import type { PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of the provider's expired rows (codes, tokens, sessions, interactions, grants and their links). */
export const oidcPurgeRules: PurgeRule[] = [
  { name: 'oidc_payloads', table: 'oidc_payloads', where: 'expires_at < now()' },
];
