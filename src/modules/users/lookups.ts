import type { Queryable } from '../../storage/db.ts';
import * as store from './lookups.store.ts';

// What other modules may read of user records and memberships (SQL in lookups.store.ts). Each takes the caller's
// Queryable, so it runs inside the caller's transaction.

/**
 * The users module's tables as subqueries, for a statement of another module that joins them in one round trip
 * (`JOIN (${userTablesSql.users}) u ON …`). Columns: see lookups.store.ts.
 */
export const userTablesSql = {
  users: store.USERS_SQL,
  memberships: store.MEMBERSHIPS_SQL,
  liveMemberships: store.LIVE_MEMBERSHIPS_SQL,
  userRoles: store.USER_ROLES_SQL,
} as const;

/** The user's password hash: null when none, undefined when no such user. */
export const passwordHashOf = (q: Queryable, userId: string) => store.passwordHashOf(q, userId);

/** Which of the ids (uuids) are members of the account, pending memberships included. */
export const membersAmong = (q: Queryable, tenantId: string, userIds: string[]) =>
  store.membersAmong(q, tenantId, userIds);

/** Whether the user (a uuid) has a membership of the account, pending included. */
export const isMember = (q: Queryable, tenantId: string, userId: string) => store.isMember(q, tenantId, userId);

/** Whether the account has any member, pending included. */
export const hasMembers = (q: Queryable, tenantId: string) => store.hasMembers(q, tenantId);

/** The role ids assigned to the user in the account. */
export const roleIdsIn = (q: Queryable, tenantId: string, userId: string) => store.roleIdsIn(q, tenantId, userId);
