import type { PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of MFA: pending second steps, sent codes, remembered devices past their expiry. */
export const mfaPurgeRules: PurgeRule[] = [
  { name: 'mfa_tokens', table: 'mfa_tokens', where: 'expires_at < now()' },
  { name: 'mfa_codes', table: 'mfa_codes', where: 'expires_at < now()' },
  { name: 'mfa_remembered_devices', table: 'mfa_remembered_devices', where: 'expires_at < now()' },
];
