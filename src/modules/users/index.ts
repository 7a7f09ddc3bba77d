export { createUsersService, type UsersService } from './service.ts';
export { usersRoutes } from './routes.ts';
export { meRoutes } from './me.routes.ts';
export { isLockedNow, activeMembership, scopeToAccount, userLabel } from './record.ts';
// Consent to join an account, proof of the mailbox, and the account-scoped view of a user record (consent.ts).
export { proveMailbox, acceptMembership, asSeenBy } from './consent.ts';
export { findByEmail, findByUsername, findById, updateUser, removeAccountUsers, phones, type UserRow, type MembershipRow } from './store.ts';
// For the refresh lookup (src/modules/auth/store.ts), which reads a session, its user and their memberships at once.
export { membershipsFromJson, membershipsWithStateSql, userFromJson } from './store.ts';
// User creation (create.ts), for every flow that makes users: the one place a users row, its membership and roles are made.
export { createUserCreation, type NewUser, type UserCreation, type UserSource } from './create.ts';
// For flows that add an existing user to an account (invitations, invite tokens, SSO, SCIM): the membership and roles.
export { findByPhone, addMembership, addRoles } from './store.ts';
// For the SCIM directory, which keeps provisioned users' memberships and roles in step.
export { updateMembership, removeMembership, removeRoles, settleAfterLeaving } from './store.ts';
// The user record schema (value and type), for routes of other modules that answer a user record.
export { Empty, InviteUser, User, Username } from './schema.ts';
// For the lockout (auth, mfa, passwordless): an unlock token for a user it has just locked, to email with the lock notice.
export { issueUnlockToken, UNLOCK_TOKEN_TTL_SECONDS } from './unlock.service.ts';
