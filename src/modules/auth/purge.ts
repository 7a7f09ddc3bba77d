import { endedBeforeGrace, type PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of sessions that ended (expired or revoked), with their refresh tokens (ON DELETE CASCADE). */
export const authPurgeRules: PurgeRule[] = [
  { name: 'sessions', table: 'sessions', where: endedBeforeGrace('revoked_at') },
];
