import * as oidc from 'openid-client';
import { AppError } from '../../http/errors.ts';
import { guardedFetch } from '../../lib/outbound.ts';

/**
 * OpenID Connect relying party over openid-client v6: discovery (cached per issuer and client for 10 minutes),
 * authorization code flow with PKCE (S256), state and nonce, ID token validation (issuer, audience, expiry with
 * 60 s tolerance, nonce, and the signature against the provider's JWKS). Plain http is allowed only for loopback
 * issuers (local development and tests). Every request (discovery, token, userinfo, JWKS) goes through the outbound
 * address guard unless `allowPrivate` (OUTBOUND_ALLOW_PRIVATE_NETWORKS), bounded by a timeout and a size.
 */
const cache = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();
const TTL_MS = 10 * 60_000;
const OUTBOUND = { timeoutMs: 10_000, maxBytes: 1024 * 1024 };

const loopback = (u: URL) => ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);

export async function configurationFor(
  issuer: string,
  clientId: string,
  secret: string,
  allowPrivate: boolean,
): Promise<oidc.Configuration> {
  const key = `${issuer}\n${clientId}\n${secret}\n${allowPrivate}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.config;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new AppError('VALIDATION', 'the OIDC issuer must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback(url)))
    throw new AppError('VALIDATION', 'the OIDC issuer must be an https URL');
  const options: oidc.DiscoveryRequestOptions = {
    [oidc.customFetch]: guardedFetch({ ...OUTBOUND, allowPrivate }) as oidc.CustomFetch,
  };
  if (url.protocol === 'http:') options.execute = [oidc.allowInsecureRequests];
  const auth = secret ? oidc.ClientSecretPost(secret) : oidc.None();
  const config = oidc
    .discovery(url, clientId, { client_secret: secret || undefined, [oidc.clockTolerance]: 60 }, auth, options)
    .then((c) => {
      oidc.enableNonRepudiationChecks(c);
      return c;
    });
  cache.set(key, { at: Date.now(), config });
  config.catch(() => cache.delete(key));
  return config;
}

/** One answer for any discovery failure (refused address, closed port, bad document): no probe of what is there. */
export async function discover(
  issuer: string,
  clientId: string,
  secret: string,
  allowPrivate: boolean,
): Promise<oidc.Configuration> {
  try {
    return await configurationFor(issuer, clientId, secret, allowPrivate);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(
      'SSO_PROVIDER_UNAVAILABLE',
      `OIDC discovery at ${issuer} failed: no valid discovery document was answered`,
    );
  }
}

export function authorizationUrl(
  config: oidc.Configuration,
  p: { redirectUri: string; scope: string; state: string; nonce: string; codeChallenge: string },
): string {
  return oidc.buildAuthorizationUrl(config, {
    redirect_uri: p.redirectUri,
    scope: p.scope,
    state: p.state,
    nonce: p.nonce,
    code_challenge: p.codeChallenge,
    code_challenge_method: 'S256',
    response_type: 'code',
  }).href;
}

/** Exchanges the code and validates the ID token; answers its claims. Any refusal is a 401 naming the reason. */
export async function finish(
  config: oidc.Configuration,
  p: { redirectUri: string; code: string; state: string; iss?: string; codeVerifier: string; nonce: string },
): Promise<Record<string, unknown>> {
  const callback = new URL(p.redirectUri);
  callback.search = '';
  callback.searchParams.set('code', p.code);
  callback.searchParams.set('state', p.state);
  // The state is bound server-side to this one provider, so a missing `iss` is the provider's own.
  callback.searchParams.set('iss', p.iss ?? config.serverMetadata().issuer);
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: p.codeVerifier,
      expectedState: p.state,
      expectedNonce: p.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims() as Record<string, unknown> | undefined;
    if (!claims) throw new Error('no ID token');
    // Providers that keep profile claims out of the ID token (OIDC core 5.4) answer them at userinfo, for this subject.
    if (claims.email === undefined && config.serverMetadata().userinfo_endpoint) {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub));
      return {
        ...info,
        ...claims,
        email: info.email,
        email_verified: info.email_verified,
        name: claims.name ?? info.name,
        ...(info.groups !== undefined ? { groups: info.groups } : {}),
      };
    }
    return claims;
  } catch (err) {
    const e = err as Error & { code?: string; error?: string; error_description?: string };
    let claim: string | undefined;
    for (let c: unknown = e, i = 0; c && i < 4 && !claim; c = (c as { cause?: unknown }).cause, i++)
      claim = (c as { claim?: string }).claim;
    const reason =
      (e.error ? `${e.error}${e.error_description ? `: ${e.error_description}` : ''}` : e.message) +
      (claim ? ` (claim ${claim})` : '');
    throw new AppError('SSO_OIDC_REFUSED', `The OpenID provider's answer was refused: ${reason}`);
  }
}
