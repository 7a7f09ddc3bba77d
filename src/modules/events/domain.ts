import type { Db, Queryable } from '../../storage/db.ts';

/** The user the lockout policy locked: what a notice of it needs. */
export interface LockedUser {
  id: string;
  email: string | null;
  name: string | null;
  active_tenant_id: string | null;
}

/**
 * The in-process domain events (bus.ts): each name with the transaction handle its subscribers get and its payload.
 * Not the outbox catalogue (catalog.ts): these reach only subscribers in this process, inside the publisher's
 * transaction, and are never stored or sent to webhooks.
 */
export interface DomainEvents {
  /** An account was removed (tenants): what other modules keep of it goes in the removal transaction. */
  'account.removed': { tx: Db; data: { tenantId: string } };
  /** Accounts were written, new or reactivated (tenants; entitlements grants signup plans). */
  'accounts.created': { tx: Db; data: { tenantIds: string[] } };
  /** The lockout policy locked a user (every flow that counts failures, through credentials): an unlock link. */
  'user.locked_out': { tx: Queryable; data: LockedUser };
  /** A user's primary email changed (users): links and codes emailed to the old address become void. */
  'user.email_changed': { tx: Queryable; data: { userId: string } };
}
export type DomainEventName = keyof DomainEvents;
