import type { Queryable } from '../../storage/db.ts';

/** The user a lockout locked: what a notice needs. */
export interface LockedUser {
  id: string;
  email: string | null;
  name: string | null;
  active_tenant_id: string | null;
}
type Listener = (tx: Queryable, user: LockedUser) => Promise<void>;

/**
 * Who hears that the lockout policy locked a user. Every flow that counts failures against the lockout policy (password
 * sign-in, MFA, passwordless, activation and invitation codes) calls `lockedOut` in the transaction that sets the lock;
 * the composition root registers the notice (an unlock link by email, src/context.ts), so the flows need not know
 * the users or messaging modules.
 */
export function createLockNotice() {
  const listeners: Listener[] = [];
  return {
    onLockedOut(fn: Listener): void {
      listeners.push(fn);
    },
    async lockedOut(tx: Queryable, user: LockedUser): Promise<void> {
      for (const fn of listeners) await fn(tx, user);
    },
  };
}
