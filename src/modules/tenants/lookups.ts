import { LIVE_ACCOUNTS_SQL } from './lookups.store.ts';

/** The accounts table as subqueries, for a statement of another module that joins it (`JOIN (${…}) t ON …`). */
export const accountTablesSql = { liveAccounts: LIVE_ACCOUNTS_SQL } as const;
