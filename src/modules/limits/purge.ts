import type { PurgeRule } from '../../jobs/purge.ts';

/** Counters whose window ended: nothing reads them again (a new hit starts a new window on the same row anyway). */
export const limitsPurgeRules: PurgeRule[] = [
  { name: 'rate_limit_counters', table: 'rate_limit_counters', where: "window_end < now() - interval '1 hour'" },
];
