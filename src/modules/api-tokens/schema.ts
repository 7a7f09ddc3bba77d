import { Type, type Static } from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const DateTime = Type.String({ format: 'date-time' });
const Ids = Type.Array(Uuid, { maxItems: 100, uniqueItems: true });
const Description = Type.String({ maxLength: 1000 });
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: 'free-form JSON object kept with the token',
});
/** Minutes until the token expires; absent or 0: it never expires. At most ten years. */
const ExpiresInMinutes = Type.Integer({ minimum: 0, maximum: 5_256_000 });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

// -- client-credentials API tokens --

export const CreateTenantApiToken = Type.Object({
  metadata: Type.Optional(Metadata),
  description: Type.Optional(Description),
  roleIds: Type.Optional(Ids),
  permissionIds: Type.Optional(Ids),
  expiresInMinutes: Type.Optional(ExpiresInMinutes),
});
export type CreateTenantApiToken = Static<typeof CreateTenantApiToken>;

export const UpdateTenantApiToken = Type.Object({
  metadata: Type.Optional(Metadata),
  description: Type.Optional(Description),
  roleIds: Type.Optional(Ids),
  permissionIds: Type.Optional(Ids),
});
export type UpdateTenantApiToken = Static<typeof UpdateTenantApiToken>;

export const TenantApiToken = Type.Object({
  clientId: Type.String(),
  description: Type.String(),
  tenantId: Type.String(),
  createdByUserId: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: DateTime,
  permissionIds: Type.Array(Type.String()),
  roleIds: Type.Array(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
});
export const CreatedTenantApiToken = Type.Object({ ...TenantApiToken.properties, secret: Type.String() });

export const CreateUserApiToken = Type.Object({
  metadata: Type.Optional(Metadata),
  description: Type.Optional(Description),
  expiresInMinutes: Type.Optional(ExpiresInMinutes),
  /** Gatehouse extension: a subset of the user's own permissions; absent or empty = all of them. */
  permissionIds: Type.Optional(Ids),
});
export type CreateUserApiToken = Static<typeof CreateUserApiToken>;

export const UserApiToken = Type.Object({
  clientId: Type.String(),
  description: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: DateTime,
  expires: Type.Union([DateTime, Type.Null()]),
  permissionIds: Type.Array(Type.String()),
});
export const CreatedUserApiToken = Type.Object({ ...UserApiToken.properties, secret: Type.String() });

export const ApiTokenAuthBody = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 200 }),
  secret: Type.String({ minLength: 1, maxLength: 500 }),
});
export const ApiTokenRefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 500 }) });
export const ApiTokenAuthResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  expires_in: Type.Number(),
  expires: Type.String(),
});
export type ApiTokenAuthResponse = Static<typeof ApiTokenAuthResponse>;

// -- long-lived access tokens --

export const CreateTenantAccessToken = Type.Object({
  description: Type.Optional(Description),
  expiresInMinutes: Type.Optional(ExpiresInMinutes),
  roleIds: Type.Optional(Ids),
});
export type CreateTenantAccessToken = Static<typeof CreateTenantAccessToken>;

export const TenantAccessToken = Type.Object({
  id: Type.String(),
  description: Type.String(),
  createdAt: DateTime,
  secret: Type.Optional(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
  roleIds: Type.Array(Type.String()),
  createdByUserId: Type.String(),
});
export const TenantAccessTokens = Type.Object({ accessTokens: Type.Array(TenantAccessToken) });

export const CreateUserAccessToken = Type.Object({
  description: Type.Optional(Description),
  expiresInMinutes: Type.Optional(ExpiresInMinutes),
  /** Gatehouse extension: a subset of the user's own permissions; absent or empty = all of them. */
  permissionIds: Type.Optional(Ids),
});
export type CreateUserAccessToken = Static<typeof CreateUserAccessToken>;

export const UserAccessToken = Type.Object({
  id: Type.String(),
  description: Type.String(),
  createdAt: DateTime,
  secret: Type.Optional(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
  permissionIds: Type.Array(Type.String()),
});
export const UserAccessTokens = Type.Object({ accessTokens: Type.Array(UserAccessToken) });

export const UserAccessTokenData = Type.Object({
  userId: Type.String(),
  id: Type.String(),
  tenantId: Type.String(),
  permissions: Type.Array(Type.String()),
  roles: Type.Array(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
});
export const TenantAccessTokenData = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  permissions: Type.Array(Type.String()),
  roles: Type.Array(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
});

// -- delegation and impersonation --

export const DelegationConfig = Type.Object({ enabled: Type.Boolean() });
export const UpdateDelegationConfig = Type.Object({ enabled: Type.Optional(Type.Boolean()) });

export const DelegateBody = Type.Object({ userId: Uuid });
export const DelegatedToken = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  issued_token_type: Type.String(),
  expires_in: Type.Number(),
  expires: Type.String(),
});

export const ImpersonateBody = Type.Object({
  userId: Uuid,
  /** The account to act in; default: the tenant header, else the user's active account. */
  tenantId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
});
export type ImpersonateBody = Static<typeof ImpersonateBody>;
export const Impersonated = Type.Object({
  accessToken: Type.String(),
  expiresIn: Type.Number(),
  expires: Type.String(),
  userId: Type.String(),
  tenantId: Type.String(),
  impersonationId: Type.String(),
});

export const TokenAct = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  tenantId: Type.String(),
  userId: Type.String(),
  actor: Type.Object({ type: Type.String(), id: Type.String() }),
  reason: Type.String(),
  createdAt: DateTime,
  expiresAt: DateTime,
});
