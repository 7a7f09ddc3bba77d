import { Type, type Static } from 'typebox';
import { IMPORT_TYPES } from '../credentials/index.ts';
import { MAX_MIGRATION_ITEMS, migrationStatusSchema } from '../account-migration/index.ts';
import { Email, JsonObjectString, Phone, PictureUrl, Provider, Username } from '../users/index.ts';

/** The body of POST /identity/resources/migrations/v1/local (interface section 4.1, "Migrate one user"). */
export const MigrateUserBody = Type.Object({
  email: Email,
  tenantId: Type.String({ minLength: 1, maxLength: 255, description: 'the account the user lands in (must exist)' }),
  username: Type.Optional(Username),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  profilePictureUrl: Type.Optional(PictureUrl),
  passwordHash: Type.Optional(Type.String({ minLength: 1, maxLength: 4095 })),
  passwordHashType: Type.Optional(
    Type.Union(
      IMPORT_TYPES.map((t) => Type.Literal(t)),
      { description: IMPORT_TYPES.join(', ') },
    ),
  ),
  passwordHashConfig: Type.Optional(
    Type.String({ maxLength: 4095, description: 'stringified JSON object; keys per wire.md section 8' }),
  ),
  authenticatorAppMfaSecret: Type.Optional(
    Type.String({ pattern: '^[A-Za-z2-7]{16,128}=*$', description: 'base32 TOTP secret' }),
  ),
  phoneNumber: Type.Optional(Phone),
  phoneNumberType: Type.Optional(Type.Union([Type.Literal('auth'), Type.Literal('mfa')])),
  provider: Type.Optional(Provider),
  metadata: Type.Optional(JsonObjectString),
  verifyUser: Type.Optional(Type.Boolean({ default: false })),
  roleIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true })),
  vendorMetadata: Type.Optional(JsonObjectString),
});
export type MigrateUserBody = Static<typeof MigrateUserBody>;

/** Items are checked one by one by the job, so that one bad user is an error entry, not a rejected request. */
export const BulkBody = Type.Object({
  users: Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: MAX_MIGRATION_ITEMS }),
});

export const UserMigrationStatus = migrationStatusSchema('email');

export const ExtIdpBody = Type.Object({
  domain: Type.String({ pattern: '^https://[^\\s/]+', maxLength: 2048, description: 'must start with https://' }),
  clientId: Type.String({ minLength: 1, maxLength: 1024 }),
  secret: Type.String({ minLength: 1, maxLength: 4096 }),
  tenantIdFieldName: Type.String({ minLength: 1, maxLength: 255 }),
  isTenantIdOnUserMetadata: Type.Optional(Type.Boolean()),
});
export type ExtIdpBody = Static<typeof ExtIdpBody>;
export const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 64 }) });

export const ACCESS_TYPES = ['FREE_ACCESS', 'MANAGED_ACCESS'] as const;
export const APP_TYPES = ['web', 'mobile-ios', 'mobile-android', 'agent', 'other'] as const;
/** The stacks routes.md lists for Create Application (its list is clipped after 'vanilla.j…'). */
export const FRONTEND_STACKS = ['react', 'vue', 'angular', 'next.js', 'vanilla.js'] as const;

/** ApplicationsResponse (routes.md); `autoAssign` is a Gatehouse extension. */
export const Application = Type.Object({
  id: Type.String(),
  vendorId: Type.String({ description: 'the environment id' }),
  name: Type.String(),
  appURL: Type.String(),
  loginURL: Type.String(),
  logoURL: Type.String(),
  accessType: Type.Enum(ACCESS_TYPES),
  type: Type.String({ description: APP_TYPES.join(', ') }),
  frontendStack: Type.Optional(Type.String({ description: 'absent when not stated' })),
  isDefault: Type.Boolean(),
  autoAssign: Type.Boolean(),
  isActive: Type.Boolean(),
  description: Type.String(),
  metadata: Type.Object({}, { additionalProperties: true }),
  appHost: Type.String(),
  allowDcr: Type.Boolean({ description: 'dynamic client registration allowed' }),
  redirectUris: Type.Array(Type.String(), { description: 'OpenID client: redirect URIs accepted (exact match)' }),
  isFirstParty: Type.Boolean({
    description: 'OpenID client: an application of the environment itself (no consent page)',
  }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const CreateApplication = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  appURL: Type.Optional(Type.String({ maxLength: 2048 })),
  loginURL: Type.Optional(Type.String({ maxLength: 2048 })),
  logoURL: Type.Optional(Type.String({ maxLength: 4095 })),
  accessType: Type.Optional(Type.Enum(ACCESS_TYPES)),
  type: Type.Optional(Type.Enum(APP_TYPES)),
  frontendStack: Type.Optional(Type.Enum(FRONTEND_STACKS)),
  isDefault: Type.Optional(Type.Boolean()),
  autoAssign: Type.Optional(Type.Boolean({ description: 'migrated users are assigned to it (Gatehouse extension)' })),
  isActive: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String({ maxLength: 4095 })),
  metadata: Type.Optional(
    Type.Object({}, { additionalProperties: true, maxProperties: 100, description: 'a JSON object' }),
  ),
  appHost: Type.Optional(Type.String({ maxLength: 2048 })),
  allowDcr: Type.Optional(Type.Boolean()),
  redirectUris: Type.Optional(
    Type.Array(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s#*]+$',
        description: 'an absolute URI without fragment or wildcard',
      }),
      { maxItems: 50, uniqueItems: true, description: 'OpenID client: redirect URIs accepted (exact match)' },
    ),
  ),
  isFirstParty: Type.Optional(
    Type.Boolean({ description: 'OpenID client: first-party applications skip the consent page (default true)' }),
  ),
});
export type CreateApplication = Static<typeof CreateApplication>;
/** GET /applications/resources/applications/v1 filters; `ids` is a comma list (or the parameter repeated). */
export const ApplicationsQuery = Type.Object({
  _accessType: Type.Optional(Type.Enum(ACCESS_TYPES)),
  _isDefault: Type.Optional(Type.Boolean()),
  _isActive: Type.Optional(Type.Boolean()),
  ids: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 100 })),
  type: Type.Optional(Type.Enum(APP_TYPES)),
});
export type ApplicationsQuery = Static<typeof ApplicationsQuery>;
export const AssignUsersBody = Type.Object({
  appId: Type.String({ maxLength: 64 }),
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
  userIds: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
});
export type AssignUsersBody = Static<typeof AssignUsersBody>;
