import type { PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of WebAuthn: challenges nobody answered before they expired. */
export const webauthnPurgeRules: PurgeRule[] = [
  { name: 'webauthn_challenges', table: 'webauthn_challenges', where: 'expires_at < now()' },
];
