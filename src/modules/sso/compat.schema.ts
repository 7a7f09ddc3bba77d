import { Type, type Static } from 'typebox';
import { ConfigBody, Configuration } from './schema.ts';

/**
 * Schemas of the older single-SAML screens (compat.routes.ts). Those screens know one SAML configuration per account
 * with one email domain, its validation flag and the TXT record to publish (`generatedVerification`).
 */
export const LegacySamlBody = Type.Object(
  {
    ...ConfigBody.properties,
    /** The one email domain of the configuration; a new value replaces the claimed domains (see compat.service.ts). */
    domain: Type.Optional(Type.String({ maxLength: 253 })),
  },
  { additionalProperties: true },
);
export type LegacySamlBody = Static<typeof LegacySamlBody>;

export const LegacySamlConfiguration = Type.Object({
  ...Configuration.properties,
  domain: Type.String({ description: "the configuration's first claimed domain, '' when none" }),
  validated: Type.Boolean({ description: 'whether that domain is validated' }),
  generatedVerification: Type.String({ description: 'the DNS TXT record that validates that domain' }),
});
export type LegacySamlConfiguration = Static<typeof LegacySamlConfiguration>;

export const LegacyGroupParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const PublicSso = Type.Object({
  isActive: Type.Boolean({ description: 'the account has an enabled SSO configuration (pre-login can route to it)' }),
});
export const PublicSsoQuery = Type.Object({ tenantId: Type.Optional(Type.String({ maxLength: 255 })) });

export const OidcSettingsBody = Type.Object({
  active: Type.Boolean(),
  /** The app page the OpenID provider sends the code to (it calls oidc/postlogin); must be in allowedRedirectUrls. */
  redirectUri: Type.Optional(Type.String({ maxLength: 2000 })),
});
export const OidcSettings = Type.Object(
  {
    active: Type.Boolean({ description: 'OIDC SSO is offered in the environment' }),
    redirectUri: Type.String({ description: "the OIDC redirect page, '' when none is set" }),
  },
  { description: 'ConfigureOidcResponse' },
);
export type OidcSettings = Static<typeof OidcSettings>;
