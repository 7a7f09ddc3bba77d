import { Type, type Static } from 'typebox';
import { User } from '../users/index.ts';

// The provider names and username rule of user creation (users/schema.ts, not exported through users/index.ts).
const PROVIDERS = ['local', 'saml', 'scim2', 'google', 'github', 'facebook', 'microsoft', 'slack', 'apple'] as const;

/**
 * The body of POST /identity/resources/users/v2 ("Invite User"). username, password and provider apply when the
 * invitation creates the user (as POST /identity/resources/users/v1 does); an existing user keeps theirs, and a
 * password for an existing user is a 409 (an invitation never changes someone's password).
 */
export const InviteBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  username: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._@+-]{1,128}$' })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'checked against the password policy; only for a user the invitation creates' })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  profilePictureUrl: Type.Optional(Type.String({ maxLength: 4095 })),
  phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9](?:-?\\d){5,13}$' })),
  metadata: Type.Optional(Type.String({ maxLength: 65536, description: 'stringified JSON object' })),
  roleIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true })),
  skipInviteEmail: Type.Optional(Type.Boolean()),
  provider: Type.Optional(Type.Enum(PROVIDERS, { description: 'how the new user signs in; default local' })),
});
export type InviteBody = Static<typeof InviteBody>;

const Uid = Type.String({ minLength: 1, maxLength: 64 });
export const AcceptBody = Type.Object({ userId: Uid, token: Type.String({ minLength: 1, maxLength: 512 }) });
export const AcceptCodeBody = Type.Object({ userId: Uid, code: Type.String({ minLength: 1, maxLength: 16 }), token: Type.Optional(Type.String({ maxLength: 512 })) });
export const ResetBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) });
export const InvitationConfiguration = Type.Object({ tenantInvitationsAllowed: Type.Boolean(), emailsEnabled: Type.Boolean() });

/**
 * The invited user: the user record (users/schema.ts `User`) whose permission items also carry the permission's
 * `assignmentType`, as the invitation has always answered them (the users routes' schema leaves it out).
 */
const PermissionItem = User.properties.permissions.items;
export const InvitedUser = Type.Object({
  ...User.properties,
  permissions: Type.Array(Type.Object({ ...PermissionItem.properties, assignmentType: Type.Optional(Type.String({ description: 'NEVER, ALWAYS or ASSIGNABLE' })) })),
});
