import { Type, type Static } from 'typebox';

const Url = Type.String({ maxLength: 2000 });
const Id = Type.String({ minLength: 1, maxLength: 64 });
const RoleIds = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true });

export const ConfigBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    type: Type.Optional(
      Type.Union([Type.Literal('saml'), Type.Literal('oidc'), Type.Literal('SAML'), Type.Literal('OIDC')]),
    ),
    ssoEndpoint: Type.Optional(Url),
    publicCertificate: Type.Optional(Type.String({ maxLength: 20000 })),
    signRequest: Type.Optional(Type.Boolean()),
    acsUrl: Type.Optional(Url),
    spEntityId: Type.Optional(Type.String({ maxLength: 2000 })),
    idpEntityId: Type.Optional(Type.String({ maxLength: 2000 })),
    oidcClientId: Type.Optional(Type.String({ maxLength: 500 })),
    oidcSecret: Type.Optional(Type.String({ maxLength: 2000 })),
    /** OIDC: `issuer` (discovery), `scopes`, `provider` (the users' provider name); both: `groupAttribute`. */
    configMetadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    overrideActiveTenant: Type.Optional(Type.Boolean()),
    subAccountAccessLimit: Type.Optional(Type.Number()),
    roleIds: Type.Optional(RoleIds),
  },
  { additionalProperties: true },
);
export type ConfigBody = Static<typeof ConfigBody>;

export const MetadataBody = Type.Object({ metadata: Type.String({ minLength: 1, maxLength: 200000 }) });
export const MetadataUrlBody = Type.Object({
  url: Url,
  configMetadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const Domain = Type.Object({
  id: Type.String(),
  domain: Type.String(),
  validated: Type.Boolean(),
  txtRecord: Type.String(),
  ssoConfigId: Type.String(),
  createdAt: Type.String(),
});
export const Group = Type.Object({
  id: Type.String(),
  group: Type.String(),
  roleIds: Type.Array(Type.String()),
  ssoConfigId: Type.String(),
});

export const Configuration = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  type: Type.String(),
  enabled: Type.Boolean(),
  ssoEndpoint: Type.String(),
  idpEntityId: Type.String(),
  publicCertificate: Type.String(),
  signRequest: Type.Boolean(),
  acsUrl: Type.String(),
  spEntityId: Type.String(),
  oidcClientId: Type.String(),
  oidcIssuer: Type.String(),
  configMetadata: Type.Record(Type.String(), Type.Unknown()),
  roleIds: Type.Array(Type.String()),
  domains: Type.Array(Domain),
  groups: Type.Array(Group),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const DomainBody = Type.Object({ domain: Type.String({ minLength: 3, maxLength: 253 }) });
export const RolesBody = Type.Object({ roleIds: RoleIds });
export const GroupBody = Type.Object({ group: Type.String({ minLength: 1, maxLength: 500 }), roleIds: RoleIds });
export const EmailBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }) });
export const DomainsSettings = Type.Object({
  allowVerifiedUsersToAddDomains: Type.Boolean(),
  skipDomainVerification: Type.Boolean(),
  bypassDomainCrossValidation: Type.Boolean(),
});
export const MultipleSsoSettings = Type.Object({
  unspecifiedTenantStrategy: Type.String({ maxLength: 100 }),
  active: Type.Boolean(),
  useActiveTenant: Type.Boolean(),
});

export const ConfigParams = Type.Object({ configurationId: Id });
export const DomainParams = Type.Object({ configurationId: Id, domainId: Id });
export const GroupParams = Type.Object({ configurationId: Id, groupId: Id });

export const PreloginBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  /**
   * SAML: where the browser goes after the ACS; OIDC: the redirect_uri the IdP sends the code to (default: the
   * environment's active OIDC redirect page, sso/v1/oidc/configurations). Allow-listed.
   */
  redirectUri: Type.Optional(Url),
});
// `idpType` is the name the browser SDK reads (IPreLoginWithIdpTypeResponse); `type` is kept for older clients.
export const PreloginResponse = Type.Object({
  address: Type.String(),
  type: Type.String(),
  idpType: Type.String(),
  tenantId: Type.String(),
});

export const SamlPostLoginBody = Type.Object({
  SAMLResponse: Type.String({ minLength: 1, maxLength: 500000 }),
  RelayState: Type.Optional(Type.String({ maxLength: 500 })),
});
export const OidcPostLoginBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 4000 }),
  state: Type.String({ minLength: 1, maxLength: 500 }),
  iss: Type.Optional(Type.String({ maxLength: 2000 })),
  redirectUri: Type.Optional(Url),
});

// -- responses of the routes above (config.service.ts); the serializer drops what a schema leaves out --
export const Empty = Type.Object({}, { description: 'empty object' });
export const RoleIdsAnswer = Type.Object({ roleIds: Type.Array(Type.String()) });
export const ExcludedEmail = Type.Object({ email: Type.String({ description: 'lower-cased' }) });
export const ExcludedEmails = Type.Object({ emails: Type.Array(Type.String()) });
export const SamlConfigurationAnswer = Type.Union([Configuration, Empty], {
  description: 'the SAML configuration, or {} when the account has none',
});
export const SpCertificate = Type.Object({
  certificate: Type.String({ description: 'base64 DER body, no PEM armour' }),
  pem: Type.String(),
});
export const VendorSamlConfig = Type.Object({
  acsUrl: Type.String(),
  spEntityIdPattern: Type.String({ description: 'the SP entity id with {tenantId} for the account' }),
  spCertificate: Type.String({ description: 'base64 DER body, no PEM armour' }),
  signatureAlgorithms: Type.Array(Type.String()),
});
/** XML answered as is (never through the JSON serializer). */
export const SpMetadataXml = {
  description: 'SAML 2.0 service-provider metadata (EntityDescriptor)',
  content: { 'application/samlmetadata+xml': { schema: Type.String() } },
};
/** A browser post that named an allow-listed app URL is answered with a redirect instead of the JSON sign-in answer. */
export const RedirectToApp = Type.Null({
  description: 'redirect (Location header) to the app URL; an MFA challenge travels in the fragment',
});
