import type { AuthContext } from '../../http/auth.ts';
import type { Queryable } from '../../storage/db.ts';
import { scopeToAccount } from './record.ts';
import type { User } from './schema.ts';
import * as store from './store.ts';

// The person's consent and proof (for other modules, through index.ts): a membership an account administrator made for
// an existing user waits for the user's acceptance, and a password an administrator chose lasts until the owner proves
// the mailbox.

/**
 * The owner proved the mailbox (email verification, activation, invitation link or code, emailed reset link): a
 * temporary password, chosen by an account administrator, is dropped. True when one was dropped: the flow then ends
 * the user's other sessions (they may have been started with that password) and may set the owner's own password.
 */
export const proveMailbox = (q: Queryable, userId: string): Promise<boolean> => store.dropTemporaryPassword(q, userId);

/** The user accepts a pending membership: it gives access from now on. False when none was pending. */
export const acceptMembership = (q: Queryable, tenantId: string, userId: string): Promise<boolean> =>
  store.acceptMembership(q, tenantId, userId);

/**
 * A user record as the caller may see it: an environment token (or no caller) sees it whole; a user token only what
 * belongs to `tenantId` (default: the token's account), see `scopeToAccount`. Every route answering a user record to
 * a user token passes it through here.
 */
export function asSeenBy(auth: AuthContext | undefined, rec: User, tenantId?: string): User {
  if (auth?.kind !== 'user') return rec;
  return scopeToAccount(rec, tenantId ?? auth.tenantId);
}
