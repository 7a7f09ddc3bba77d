import { Type, type Static } from 'typebox';

export const VendorAuthBody = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 200 }),
  secret: Type.String({ minLength: 1, maxLength: 500 }),
});
export const VendorAuthResponse = Type.Object({ token: Type.String(), expiresIn: Type.Number() });

export const SERVICES = [
  'auth',
  'identity',
  'tenants',
  'directory',
  'entitlements',
  'audits',
  'webhook',
  'applications',
  'team',
] as const;
const Scope = Type.String({
  pattern: `^(${SERVICES.join('|')})(:read)?$`,
  description: 'a service name, or service:read for GET only',
});

export const CreateCredentialBody = Type.Object({
  description: Type.Optional(Type.String({ maxLength: 500 })),
  scopes: Type.Optional(Type.Array(Scope, { maxItems: 20, uniqueItems: true })),
});
export type CreateCredentialBody = Static<typeof CreateCredentialBody>;

export const Credential = Type.Object({
  id: Type.String(),
  clientId: Type.String(),
  description: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export const CreatedCredential = Type.Object({ ...Credential.properties, secret: Type.String() });

const SameSite = Type.Union([Type.Literal('STRICT'), Type.Literal('LAX'), Type.Literal('NONE')]);
const M2M = Type.Union([Type.Literal('ClientCredentials'), Type.Literal('AccessToken')]);

/** Environment-wide identity settings (token lifetimes in seconds). */
export const VendorSettings = Type.Object({
  defaultTokenExpiration: Type.Integer({ minimum: 30, maximum: 86400 }),
  defaultRefreshTokenExpiration: Type.Integer({ minimum: 60, maximum: 31536000 }),
  cookieSameSite: SameSite,
  machineToMachineAuthStrategy: M2M,
  allowSignups: Type.Boolean(),
  apiTokensEnabled: Type.Boolean(),
  /** Delegation: an account API token may obtain a token acting on behalf of a user (`act` claim). */
  delegationEnabled: Type.Boolean(),
  allowOverridePasswordComplexity: Type.Boolean(),
  forcePermissions: Type.Boolean(),
  temporaryUsersEnabled: Type.Boolean(),
  /** Where SSO and social sign-in may send the browser (redirect_uri, after-login URL); see src/modules/sso/flow.ts. */
  allowedRedirectUrls: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 200 }),
});
export type VendorSettings = Static<typeof VendorSettings>;

export const DEFAULT_SETTINGS: VendorSettings = {
  defaultTokenExpiration: 300,
  defaultRefreshTokenExpiration: 2592000,
  cookieSameSite: 'LAX',
  machineToMachineAuthStrategy: 'ClientCredentials',
  allowSignups: false,
  apiTokensEnabled: true,
  delegationEnabled: false,
  allowOverridePasswordComplexity: false,
  forcePermissions: false,
  temporaryUsersEnabled: false,
  allowedRedirectUrls: [],
};

export const UpdateVendorSettings = Type.Partial(VendorSettings, { minProperties: 1 });
export type UpdateVendorSettings = Static<typeof UpdateVendorSettings>;
export const VendorConfig = Type.Object({
  id: Type.String(),
  publicKey: Type.String(),
  algorithm: Type.String(),
  ...VendorSettings.properties,
});
