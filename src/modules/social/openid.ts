import * as oidc from 'openid-client';
import { AppError } from '../../http/errors.ts';
import type { Endpoints } from './providers.ts';

/**
 * The code exchange of an OpenID provider through openid-client v6: PKCE, state, and an ID token whose signature
 * (the issuer's JWKS), `iss`, `aud`, expiry (60 s tolerance) and `nonce` are verified. Plain http is accepted only
 * for loopback addresses (local development and tests).
 */
export interface OpenIdExchange {
  clientId: string;
  clientSecret: string;
  urls: Endpoints;
  redirectUri: string;
  code: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  fetch: typeof fetch;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** ID token signatures accepted: asymmetric only (no shared-secret HS*, never `none`). */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Whether plain http is in use; anything but a loopback address over http is refused. */
function needsInsecure(urls: Endpoints): boolean {
  let insecure = false;
  for (const u of [urls.authorizationUrl, urls.tokenUrl, urls.userInfoUrl, urls.issuer, urls.jwksUrl]) {
    if (!u || u.includes('{tenantid}')) continue;
    const parsed = new URL(u);
    if (parsed.protocol === 'https:') continue;
    if (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)) insecure = true;
    else throw new AppError('VALIDATION', `${u} must be an https URL`);
  }
  return insecure;
}

async function configuration(p: OpenIdExchange): Promise<oidc.Configuration> {
  const insecure = needsInsecure(p.urls);
  const metadata: Partial<oidc.ClientMetadata> = { client_secret: p.clientSecret, [oidc.clockTolerance]: 60 };
  const auth = oidc.ClientSecretPost(p.clientSecret);
  const options: oidc.DiscoveryRequestOptions = {
    [oidc.customFetch]: p.fetch as oidc.CustomFetch,
    ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
  };
  const discover = (issuer: string) => oidc.discovery(new URL(issuer), p.clientId, metadata, auth, options);
  let config: oidc.Configuration;
  if (p.urls.issuer?.includes('{tenantid}')) {
    // Entra's multi-tenant issuer: openid-client checks `iss` against the template filled with the token's `tid`,
    // which it does for metadata it discovered itself (the endpoints are the discovered ones).
    config = await discover(p.urls.issuer.replace('{tenantid}', 'common'));
  } else {
    let issuer = p.urls.issuer ?? new URL(p.urls.authorizationUrl).origin;
    let jwksUri = p.urls.jwksUrl;
    let algs = ASYMMETRIC;
    if (!jwksUri) {
      const found = (await discover(issuer)).serverMetadata();
      issuer = found.issuer;
      jwksUri = found.jwks_uri;
      algs = (found.id_token_signing_alg_values_supported ?? ASYMMETRIC).filter((a) => ASYMMETRIC.includes(a));
    }
    const server: oidc.ServerMetadata = {
      issuer,
      authorization_endpoint: p.urls.authorizationUrl,
      token_endpoint: p.urls.tokenUrl,
      ...(p.urls.userInfoUrl ? { userinfo_endpoint: p.urls.userInfoUrl } : {}),
      jwks_uri: jwksUri,
      id_token_signing_alg_values_supported: algs,
    };
    config = new oidc.Configuration(server, p.clientId, metadata, auth);
    config[oidc.customFetch] = p.fetch as oidc.CustomFetch;
    if (insecure) oidc.allowInsecureRequests(config);
  }
  oidc.enableNonRepudiationChecks(config);
  return config;
}

/** The access token and the verified ID token claims; any refusal is a 401 naming the reason. */
export async function exchangeCode(
  p: OpenIdExchange,
): Promise<{ accessToken: string; claims: Record<string, unknown> }> {
  let config: oidc.Configuration;
  try {
    config = await configuration(p);
  } catch (err) {
    if (err instanceof AppError) throw err;
    const where = p.urls.issuer ?? p.urls.authorizationUrl;
    throw new AppError('SSO_PROVIDER_UNAVAILABLE', `The OpenID configuration of ${where} could not be read`);
  }
  const callback = new URL(p.redirectUri);
  callback.search = '';
  callback.searchParams.set('code', p.code);
  callback.searchParams.set('state', p.state);
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: p.codeVerifier,
      expectedState: p.state,
      expectedNonce: p.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims() as Record<string, unknown> | undefined;
    if (!claims) throw new Error('the provider answered no ID token');
    return { accessToken: tokens.access_token, claims };
  } catch (err) {
    const e = err as Error & { error?: string; error_description?: string };
    let claim: string | undefined;
    for (let c: unknown = e, i = 0; c && i < 4 && !claim; c = (c as { cause?: unknown }).cause, i++) {
      claim = (c as { claim?: string }).claim;
    }
    const told = e.error ? `${e.error}${e.error_description ? `: ${e.error_description}` : ''}` : e.message;
    const reason = told + (claim ? ` (claim ${claim})` : '');
    throw new AppError('SOCIAL_LOGIN_REFUSED', `The provider's answer was refused: ${reason}`);
  }
}
