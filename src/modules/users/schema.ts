import { Type, type Static } from 'typebox';

export const PROVIDERS = [
  'local',
  'saml',
  'scim2',
  'google',
  'github',
  'facebook',
  'microsoft',
  'slack',
  'apple',
] as const;
export const Provider = Type.Union(PROVIDERS.map((p) => Type.Literal(p)));

/** E.164-like: a plus sign, a digit 1-9, then 5 to 13 digits, optionally separated by hyphens. */
export const PHONE_PATTERN = '^\\+[1-9](?:-?\\d){5,13}$';
export const Phone = Type.String({ pattern: PHONE_PATTERN, description: 'leading plus, country code, no spaces' });
export const Email = Type.String({ format: 'email', maxLength: 320 });
export const Username = Type.String({ pattern: '^[A-Za-z0-9._@+-]{1,128}$' });
/** Stringified JSON object; checked by the service (the wire carries it as a string). */
export const JsonObjectString = Type.String({ maxLength: 65536, description: 'stringified JSON object' });
export const PictureUrl = Type.String({ maxLength: 4095 });

const createFields = {
  email: Email,
  username: Type.Optional(Username),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  profilePictureUrl: Type.Optional(PictureUrl),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  phoneNumber: Type.Optional(Phone),
  provider: Type.Optional(Provider),
  metadata: Type.Optional(JsonObjectString),
  vendorMetadata: Type.Optional(JsonObjectString),
  roleIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true })),
  skipInviteEmail: Type.Optional(Type.Boolean()),
  expirationInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 31536000 })),
  mfaBypass: Type.Optional(Type.Boolean()),
  externalId: Type.Optional(Type.String({ maxLength: 255 })),
  verified: Type.Optional(Type.Boolean()),
};
export const CreateUser = Type.Object(createFields);
export type CreateUser = Static<typeof CreateUser>;
export const VendorCreateUser = Type.Object({
  ...createFields,
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
});
export type VendorCreateUser = Static<typeof VendorCreateUser>;

export const UpdateUser = Type.Object({
  phoneNumber: Type.Optional(Phone),
  profilePictureUrl: Type.Optional(Type.Union([PictureUrl, Type.Null()])),
  metadata: Type.Optional(JsonObjectString),
  vendorMetadata: Type.Optional(JsonObjectString),
  mfaBypass: Type.Optional(Type.Boolean()),
  externalId: Type.Optional(Type.String({ maxLength: 255 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
});
export type UpdateUser = Static<typeof UpdateUser>;
/** What a user may change of their own profile. */
export const UpdateProfile = Type.Object({
  phoneNumber: Type.Optional(Phone),
  profilePictureUrl: Type.Optional(Type.Union([PictureUrl, Type.Null()])),
  metadata: Type.Optional(JsonObjectString),
  name: Type.Optional(Type.String({ maxLength: 255 })),
});
export type UpdateProfile = Static<typeof UpdateProfile>;
/** A profile update that sets a phone number (a sign-in identifier: the identity rule applies to it). */
export const namesPhone = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as UpdateProfile).phoneNumber !== undefined;

const RoleSchema = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  isDefault: Type.Boolean(),
  firstUserRole: Type.Boolean(),
  level: Type.Number(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  permissions: Type.Array(Type.String()),
});
const PermissionSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  roleIds: Type.Array(Type.String()),
  categoryId: Type.Union([Type.String(), Type.Null()]),
  fePermission: Type.Boolean(),
  assignmentType: Type.Optional(
    Type.Union([Type.Literal('NEVER'), Type.Literal('ALWAYS'), Type.Literal('ASSIGNABLE')], {
      description: 'may account roles hold it (ASSIGNABLE), never (NEVER), or always (ALWAYS)',
    }),
  ),
});
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const UserTenant = Type.Object({
  tenantId: Type.String(),
  roles: Type.Array(RoleSchema),
  temporaryExpirationDate: Type.Optional(Type.String()),
  isDisabled: Type.Boolean(),
  subAccountAccessAllowed: Type.Boolean(),
  pending: Type.Optional(
    Type.Boolean({ description: 'true: invited, not accepted yet by the user (gives no access)' }),
  ),
});

/** The User record of interface section 2 (every required field present). */
export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  username: Nullable(Type.String()),
  profilePictureUrl: Type.String(),
  sub: Type.String(),
  verified: Type.Boolean(),
  mfaEnrolled: Type.Boolean(),
  mfaBypass: Type.Boolean(),
  phoneNumber: Type.Optional(Type.String()),
  phoneNumbers: Type.Array(Type.String()),
  roles: Type.Array(RoleSchema),
  permissions: Type.Array(PermissionSchema),
  provider: Type.String(),
  tenantId: Type.String(),
  tenantIds: Type.Array(Type.String()),
  activatedForTenant: Type.Boolean(),
  isLocked: Type.Boolean(),
  tenants: Type.Array(UserTenant),
  invisible: Type.Boolean(),
  superUser: Type.Boolean(),
  metadata: Type.String(),
  vendorMetadata: Type.String(),
  externalId: Nullable(Type.String()),
  createdAt: Type.String(),
  lastLogin: Nullable(Type.String()),
  groups: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      color: Type.String(),
      description: Type.String(),
      metadata: Type.String(),
      managedBy: Type.String(),
      createdAt: Type.String(),
      updatedAt: Type.String(),
    }),
    { description: "the user's groups in the record's account" },
  ),
  subAccountAccessAllowed: Type.Boolean(),
  managedBy: Type.String(),
  invitationPending: Type.Optional(
    Type.Boolean({ description: "true: the user has not accepted the account's invitation yet" }),
  ),
});
export type User = Static<typeof User>;

/** The answer of a delete: an empty object. */
export const Empty = Type.Object({}, { description: 'empty object' });

export const UserParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) });

export const ListUsersQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
  _filter: Type.Optional(Type.String({ maxLength: 320, description: 'substring of email or name' })),
  _email: Type.Optional(Type.String({ maxLength: 320, description: 'exact email' })),
  _identifier: Type.Optional(Type.String({ maxLength: 320 })),
  _identifierType: Type.Optional(
    Type.Union([Type.Literal('email'), Type.Literal('phoneNumber'), Type.Literal('username')]),
  ),
  _tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  _sortBy: Type.Optional(
    Type.Union([Type.Literal('createdAt'), Type.Literal('email'), Type.Literal('name')], { default: 'createdAt' }),
  ),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
});
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const RoleIdsBody = Type.Object({
  roleIds: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 100, uniqueItems: true }),
});
export const TenantBody = Type.Object({
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
  validateTenantExist: Type.Optional(Type.Boolean()),
  skipInviteEmail: Type.Optional(Type.Boolean()),
});

/** GET /users/v1/email: the address looked up (any case). */
export const EmailQuery = Type.Object({ email: Email });
/** PUT /users/v1/{userId}/email: the user's new address. */
export const EmailBody = Type.Object({ email: Email });
export const VerifyPasswordBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export const VerifyPasswordAnswer = Type.Object({
  isValid: Type.Boolean({
    description:
      'true when the password is the password of the user with this email; false for a wrong password, an unknown email, or a user without a password',
  }),
});

/** GET /users/v1/query/phrase: the fuzzy search (a top-N answer `{items}`, not a paged list). */
export const PhraseQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 10 })),
  _offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 100_000, default: 0, description: 'page index (0-based), as in the lists' }),
  ),
  _phrase: Type.Optional(
    Type.String({ maxLength: 320, description: 'substring of, or a word like one of, the name, email or username' }),
  ),
  _filter: Type.Optional(Type.String({ maxLength: 320, description: 'the phrase, when _phrase is absent' })),
  _identifier: Type.Optional(
    Type.String({ maxLength: 320, description: 'exact identifier, of the kind _identifierType names' }),
  ),
  _identifierType: Type.Optional(
    Type.Union([Type.Literal('email'), Type.Literal('phoneNumber'), Type.Literal('username')], { default: 'email' }),
  ),
  _includeSubTenants: Type.Optional(Type.Boolean({ description: "also the users of the account's sub-accounts" })),
  _namePrefix: Type.Optional(Type.String({ maxLength: 255, description: 'the name starts with this (any case)' })),
  _tenantId: Type.Optional(
    Type.String({ maxLength: 255, description: 'environment token without tenant header: the account to search' }),
  ),
});
export type PhraseQuery = Static<typeof PhraseQuery>;

/** GET /usernames/v1. */
export const UsernamesQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index (0-based)' }),
  ),
  _sortBy: Type.Optional(Type.Union([Type.Literal('userId'), Type.Literal('username')], { default: 'username' })),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
  _usernamePrefix: Type.Optional(
    Type.String({ maxLength: 128, description: 'the username starts with this (any case)' }),
  ),
  userIds: Type.Optional(
    Type.Array(Type.String({ maxLength: 8000 }), {
      maxItems: 200,
      description: 'only these users (repeat the parameter or separate with commas)',
    }),
  ),
});
export const UsernameAnswer = Type.Object({ username: Type.String(), userId: Type.String() });
/** An item of the usernames list: the browser SDK types it GetUserUsernamesResponse, with the environment id. */
export const UsernameListItem = Type.Object({
  vendorId: Type.String({ description: 'the environment id' }),
  userId: Type.String(),
  username: Type.String(),
});
export const UsernameBody = Type.Object({ username: Username });
export const UsernameParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 128 }) });

/**
 * The body of POST /identity/resources/users/v2 ("Invite User"; also the sub-account and bulk invitations). username,
 * password and provider apply when the invitation creates the user (as POST /identity/resources/users/v1 does); an
 * existing user keeps theirs, and a password for an existing user is a 409 (an invitation never changes a password).
 */
export const InviteUser = Type.Object({
  email: Email,
  username: Type.Optional(Username),
  password: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'checked against the password policy; only for a user the invitation creates',
    }),
  ),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  profilePictureUrl: Type.Optional(PictureUrl),
  phoneNumber: Type.Optional(Phone),
  metadata: Type.Optional(JsonObjectString),
  roleIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true })),
  skipInviteEmail: Type.Optional(Type.Boolean()),
  provider: Type.Optional(Type.Enum(PROVIDERS, { description: 'how the new user signs in; default local' })),
});
export type InviteUser = Static<typeof InviteUser>;
