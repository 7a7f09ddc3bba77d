import { endedBeforeGrace, type PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of the one-time links and codes of activation, invitation and passwordless, spent or expired. */
export const passwordlessPurgeRules: PurgeRule[] = [
  { name: 'one_time_codes', table: 'one_time_codes', where: endedBeforeGrace('used_at') },
];
