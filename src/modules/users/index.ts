export { createUsersService, type UsersService } from './service.ts';
export { usersRoutes } from './routes.ts';
export { meRoutes } from './me.routes.ts';
export { isLockedNow, activeMembership, scopeToAccount, userLabel } from './record.ts';
// Consent to join an account, proof of the mailbox, and the account-scoped view of a user record (consent.ts).
export { proveMailbox, acceptMembership, asSeenBy } from './consent.ts';
// The module's statements other modules run in their own transaction (statements.ts says which use what).
export { findByEmail, findByUsername, findById, findByPhone, updateUser, phones } from './statements.ts';
export type { UserRow, MembershipRow } from './statements.ts';
export { membershipsFromJson, membershipsWithState, membershipsWithStateSql, userFromJson } from './statements.ts';
// User creation (create.ts), for every flow that makes users: the one place users, memberships and roles are made.
export { createUserCreation, type NewUser, type UserCreation, type UserSource } from './create.ts';
// For flows that add an existing user to an account (invitations, invite tokens, SSO, SCIM): the membership and roles.
export { addMembership, addRoles } from './statements.ts';
export { updateMembership, removeMembership, removeRoles, settleAfterLeaving } from './statements.ts';
// The user record schema (value and type), for routes of other modules that answer a user record.
export { Empty, InviteUser, User, Username } from './schema.ts';
// The field schemas of a user record, for other modules' bodies that carry one (user migration).
export { Email, JsonObjectString, Phone, PictureUrl, Provider } from './schema.ts';
// For the lockout (auth, mfa, passwordless): an unlock token for a user it has just locked, to email with the lock notice.
export { issueUnlockToken, UNLOCK_TOKEN_TTL_SECONDS } from './unlock.service.ts';
// What other modules read of user records and memberships, as statements or subqueries to join (lookups.ts).
export { userTablesSql, passwordHashOf, membersAmong, isMember, hasMembers, roleIdsIn } from './lookups.ts';
// For the sign-in (auth): the user's part of the one statement that starts it.
export { recordSignInItem } from './sign-in.sql.ts';
// For the MFA, passwordless and phone-route flows: the phone numbers as rows (phones.ts), the user row's sign-in
// factor columns (factors.ts), and the user's parts of the MFA verify statements (second-factor.sql.ts).
export { listPhoneNumbers, phoneNumbersOf, phoneNumberByValue, phoneNumberById, addPhoneNumber } from './phones.ts';
export { markPhoneNumberVerified, removePhoneNumber, primaryPhoneOf } from './phones.ts';
export type { PhoneNumberFilter, PhoneNumberRow } from './phones.ts';
export {
  setMfaEnrolled,
  lockMigratedFactors,
  clearMigratedFactors,
  addFailedAttempt,
  lockoutRule,
  type LockoutRule,
} from './factors.ts';
export { userRowsSql, snapshotHoldsSql } from './second-factor.sql.ts';
// For auth's sign-in, refresh and step-up statements: the users module's parts of them (session.sql.ts).
export { userJsonSql, signInUserSql, resetFailedAttemptsItem, rehashPassword } from './session.sql.ts';
