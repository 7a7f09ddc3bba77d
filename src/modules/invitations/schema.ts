import { Type, type Static } from 'typebox';
import { InviteUser, User } from '../users/index.ts';

/** The body of POST /identity/resources/users/v2 ("Invite User"): the users module's (shared with its sub-account and bulk invitations). */
export const InviteBody = InviteUser;
export type InviteBody = Static<typeof InviteBody>;

const Uid = Type.String({ minLength: 1, maxLength: 64 });
export const AcceptBody = Type.Object({ userId: Uid, token: Type.String({ minLength: 1, maxLength: 512 }) });
export const AcceptCodeBody = Type.Object({
  userId: Uid,
  code: Type.String({ minLength: 1, maxLength: 16 }),
  token: Type.Optional(Type.String({ maxLength: 512 })),
});
export const ResetBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) });
export const InvitationConfiguration = Type.Object({
  tenantInvitationsAllowed: Type.Boolean(),
  emailsEnabled: Type.Boolean(),
});

/**
 * The invited user: the user record (users/schema.ts `User`) whose permission items also carry the permission's
 * `assignmentType`, as the invitation has always answered them (the users routes' schema leaves it out).
 */
const PermissionItem = User.properties.permissions.items;
export const InvitedUser = Type.Object({
  ...User.properties,
  permissions: Type.Array(
    Type.Object({
      ...PermissionItem.properties,
      assignmentType: Type.Optional(Type.String({ description: 'NEVER, ALWAYS or ASSIGNABLE' })),
    }),
  ),
});
