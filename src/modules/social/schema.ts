import { Type } from 'typebox';

/** Response schemas of the social login routes (service.ts `view`); the serializer drops what they leave out. */
const Iso = Type.String({ format: 'date-time' });
export const SocialProvider = Type.Object(
  {
    id: Type.String(),
    type: Type.String({
      description: 'built-in provider (google, github, microsoft, apple, ...) or the custom provider name',
    }),
    active: Type.Boolean(),
    clientId: Type.String(),
    redirectUrl: Type.String(),
    scopes: Type.String(),
    authorizationUrl: Type.String(),
    tokenUrl: Type.String(),
    userInfoUrl: Type.String(),
    issuer: Type.String({
      description: "OpenID: the ID token issuer checked ('' = the authorization URL's origin; unused without OpenID)",
    }),
    jwksUrl: Type.String({
      description: "OpenID providers: the keys the ID token's signature is checked with ('' = discovered)",
    }),
    displayName: Type.String(),
    ssoLogoUrl: Type.String(),
    customised: Type.Boolean({ description: 'a custom OAuth 2.0 / OIDC provider' }),
    allowSignups: Type.Boolean(),
    createdAt: Iso,
    updatedAt: Iso,
  },
  { description: 'a provider configuration; the secret is never answered' },
);
export const SocialProviderList = Type.Array(SocialProvider);
export const Empty = Type.Object({}, { description: 'empty object' });
export const PreloginAnswer = Type.Object({
  address: Type.String({ description: "the provider's authorization URL to redirect the browser to" }),
});
