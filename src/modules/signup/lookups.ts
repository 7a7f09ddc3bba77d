import type { Queryable } from '../../storage/db.ts';
import * as store from './store.ts';

// What other modules read of the users awaiting activation (SQL in store.ts), in their statement or transaction.

/** The signup module's table as a subquery, for a statement that joins it (`LEFT JOIN (${…}) pa ON …`). */
export const signupTablesSql = { pendingActivations: store.PENDING_ACTIVATIONS_SQL } as const;

/** Whether the user signed up and has not activated yet. */
export const awaitsActivation = (q: Queryable, userId: string) => store.isPending(q, userId);
