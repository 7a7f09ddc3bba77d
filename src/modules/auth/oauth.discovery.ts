import { Type } from 'typebox';

/** The claims a user access token carries (tokens.ts; wire.md section 3): `acr` and `act` only when they apply. */
const CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'amr',
  'acr',
  'sid',
  'type',
  'email',
  'email_verified',
  'name',
  'profilePictureUrl',
  'tenantId',
  'tenantIds',
  'roles',
  'permissions',
  'metadata',
  'act',
];

export const DiscoveryDocument = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  token_endpoint: Type.String(),
  end_session_endpoint: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  subject_types_supported: Type.Array(Type.String()),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  claims_supported: Type.Array(Type.String()),
  // The OpenID provider's (src/modules/oidc), when it is on.
  authorization_endpoint: Type.Optional(Type.String()),
  userinfo_endpoint: Type.Optional(Type.String()),
  revocation_endpoint: Type.Optional(Type.String()),
  introspection_endpoint: Type.Optional(Type.String()),
  code_challenge_methods_supported: Type.Optional(Type.Array(Type.String())),
  scopes_supported: Type.Optional(Type.Array(Type.String())),
  response_modes_supported: Type.Optional(Type.Array(Type.String())),
  prompt_values_supported: Type.Optional(Type.Array(Type.String())),
  claims_parameter_supported: Type.Optional(Type.Boolean()),
  revocation_endpoint_auth_methods_supported: Type.Optional(Type.Array(Type.String())),
  introspection_endpoint_auth_methods_supported: Type.Optional(Type.Array(Type.String())),
});

/**
 * OpenID Provider metadata (OIDC Discovery 1.0 / RFC 8414) of what the server actually does. `issuer` is the `iss`
 * of the tokens it signs (PUBLIC_URL). Without the OpenID provider there is no authorization endpoint (sign-in is
 * the hosted login's own API), so no response types; with it (`oidc`: its endpoints), the code flow is added.
 * `id_token_signing_alg_values_supported` names the algorithm the tokens are signed with.
 */
export function discoveryDocument(a: {
  issuer: string;
  algorithm: string;
  clientCredentials: boolean;
  oidc?: Record<string, string | string[]>;
}) {
  const base = a.issuer.replace(/\/+$/, '');
  const grants = a.clientCredentials ? ['refresh_token', 'client_credentials'] : ['refresh_token'];
  if (a.oidc)
    return {
      ...plainDocument(a, base, grants),
      ...a.oidc,
      grant_types_supported: ['authorization_code', ...grants],
      response_types_supported: ['code'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    };
  return plainDocument(a, base, grants);
}

function plainDocument(
  a: { issuer: string; algorithm: string; clientCredentials: boolean },
  base: string,
  grants: string[],
) {
  return {
    issuer: a.issuer,
    jwks_uri: `${base}/.well-known/jwks.json`,
    token_endpoint: `${base}/oauth/token`,
    end_session_endpoint: `${base}/oauth/logout`,
    grant_types_supported: grants,
    response_types_supported: [] as string[],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [a.algorithm],
    // The refresh_token grant needs no client authentication (public browser clients); client_credentials takes
    // the API token's id and secret as HTTP Basic or in the body.
    token_endpoint_auth_methods_supported: a.clientCredentials
      ? ['none', 'client_secret_basic', 'client_secret_post']
      : ['none'],
    claims_supported: CLAIMS,
  };
}
