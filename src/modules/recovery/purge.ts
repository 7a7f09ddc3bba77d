import { endedBeforeGrace, type PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of reset and verification secrets, spent or expired. */
export const recoveryPurgeRules: PurgeRule[] = [
  { name: 'password_reset_tokens', table: 'password_reset_tokens', where: endedBeforeGrace('used_at') },
  { name: 'recovery_codes', table: 'recovery_codes', where: endedBeforeGrace('used_at') },
  { name: 'email_verification_tokens', table: 'email_verification_tokens', where: endedBeforeGrace('used_at') },
  { name: 'phone_codes', table: 'phone_codes', where: endedBeforeGrace('used_at') },
];
