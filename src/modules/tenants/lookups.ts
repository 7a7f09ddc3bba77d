import type { Queryable } from '../../storage/db.ts';
import { ACCOUNTS_SQL, LIVE_ACCOUNTS_SQL } from './lookups.store.ts';
import * as store from './store.ts';

/** The accounts table as subqueries, for a statement of another module that joins it (`JOIN (${…}) t ON …`). */
export const accountTablesSql = { liveAccounts: LIVE_ACCOUNTS_SQL, accounts: ACCOUNTS_SQL } as const;

// Statements on one account that other modules run in their transaction (the caller's Queryable).

/** The live account by id (undefined when none); `lock` holds its row lock until the transaction ends. */
export const liveAccount = (q: Queryable, tenantId: string, lock?: 'FOR SHARE' | 'FOR UPDATE') =>
  store.findLive(q, tenantId, lock);

/**
 * Sets columns of a live account (column → value; the caller decides which it may write) and `updated_at`, in one
 * statement; the row after it, undefined when no live account has the id.
 */
export const setLiveColumns = (q: Queryable, tenantId: string, values: Record<string, unknown>) =>
  store.updateColumns(q, tenantId, values);
