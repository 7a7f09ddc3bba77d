import type { Queryable } from '../../storage/db.ts';
import * as phoneStore from './phones.store.ts';
import * as store from './store.ts';
import type { MembershipRow, UserRow } from './store.ts';

// The users module's own statements that other modules run inside their transaction (each takes the caller's
// Queryable). The store stays private to the module: its signatures may change behind these.

export type { MembershipRow, UserRow };

/** A user by id; `lock` takes the row for update. */
export const findById = (q: Queryable, id: string, lock = false) => store.findById(q, id, lock);
export const findByEmail = (q: Queryable, email: string) => store.findByEmail(q, email);
export const findByUsername = (q: Queryable, username: string) => store.findByUsername(q, username);
export const findByPhone = (q: Queryable, phone: string) => store.findByPhone(q, phone);
/** The user's phone numbers (user_phone_numbers). */
export const phones = (q: Queryable, userId: string) => phoneStore.numbersOf(q, userId);
/** Sets columns of the user row (column → value). */
export const updateUser = (q: Queryable, id: string, values: Record<string, unknown>) =>
  store.updateUser(q, id, values);

// For the refresh and MFA sign-in views, which read a session, its user and their memberships in one statement.
export const userFromJson = (o: Record<string, unknown>) => store.userFromJson(o);
export const membershipsFromJson = (rows: Record<string, unknown>[]) => store.membershipsFromJson(rows);
export const membershipsWithStateSql = (userExpr: string) => store.membershipsWithStateSql(userExpr);
/** The user's memberships with whether each account is live (the breached-password reset spares shared users). */
export const membershipsWithState = (q: Queryable, userId: string) => store.membershipsWithState(q, userId);

// For the flows that add an existing user to an account (new users: createUserCreation, create.ts).
export const addMembership = (
  q: Queryable,
  tenantId: string,
  userId: string,
  m: { subAccess: boolean; expiresAt: Date | null; pending?: boolean },
) => store.addMembership(q, tenantId, userId, m);
export const addRoles = (q: Queryable, tenantId: string, userId: string, roleIds: string[]) =>
  store.addRoles(q, tenantId, userId, roleIds);

// For the SCIM directory and invitations, which keep provisioned users' memberships and roles in step.
export const updateMembership = (q: Queryable, tenantId: string, userId: string, values: Record<string, unknown>) =>
  store.updateMembership(q, tenantId, userId, values);
export const removeMembership = (q: Queryable, tenantId: string, userId: string) =>
  store.removeMembership(q, tenantId, userId);
export const removeRoles = (q: Queryable, tenantId: string, userId: string, roleIds: string[]) =>
  store.removeRoles(q, tenantId, userId, roleIds);
export const settleAfterLeaving = (q: Queryable, userIds: string[], tenantId: string) =>
  store.settleAfterLeaving(q, userIds, tenantId);
