import { timingSafeEqual } from 'node:crypto';
import { readCookie } from '../../http/cookies.ts';
import { AppError } from '../../http/errors.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { REFRESH_COOKIE } from '../auth/index.ts';
import { assertAllowedRedirect } from '../environment/index.ts';
import { ACR_MFA } from '../mfa/index.ts';
import { findById } from '../users/index.ts';
import { adapterClass } from './adapter.ts';
import { ACR_SINGLE_FACTOR } from './interactions.ts';
import { errorPage, loggedOutPage, logoutPage } from './pages.ts';
import type { Provider, ProviderContext, ProviderModule } from './provider-types.ts';
import type { OidcDeps } from './service.ts';

/** The scopes and the claims each releases (id_token; the userinfo route answers the same). */
export const SCOPES = ['openid', 'offline_access', 'profile', 'email'];
// acr and amr go with every ID token (the openid scope); auth_time and sid too (client metadata, includeSid below).
const CLAIMS = {
  acr: null,
  amr: null,
  auth_time: null,
  sid: null,
  openid: ['sub', 'acr', 'amr'],
  email: ['email', 'email_verified'],
  profile: ['name', 'picture'],
};
/** Parameters of our own beyond OpenID's: the account (tenant id) to sign in to. */
const EXTRA_PARAMS = ['account_hint'];

const sameHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Builds the oidc-provider instance: the code flow only, PKCE for public clients, the platform's signing key, JWT
 * access tokens for the environment (audience = its id) that carry the platform's user-token claims, clients read
 * from the applications, state in oidc_payloads. `jwk` is the active platform key (a rotation builds a new instance).
 */
export function buildProvider(mod: ProviderModule, deps: OidcDeps, jwk: Record<string, unknown>, linkOf: LinkOf) {
  const { errors, interactionPolicy } = mod;
  const { Check } = interactionPolicy;
  const alg = String(jwk.alg);
  const resource = deps.issuer;
  // Wildcard entries of allowedRedirectUrls, read with the client (the provider's own check is exact match only).
  let wildcards: string[] = [];

  async function clientMetadata(id: string) {
    const app = await deps.clients(id);
    if (!app) return undefined;
    const allow = (await deps.environment.cachedSettings()).allowedRedirectUrls ?? [];
    wildcards = allow.filter((u) => u.endsWith('*'));
    const native = app.type === 'mobile-ios' || app.type === 'mobile-android';
    // The environment's exact web URLs serve web clients; a native app registers its own (custom scheme, loopback).
    const exact = native ? [] : allow.filter((u) => !u.endsWith('*') && /^https?:\/\/[^#]+$/.test(u));
    const uris = [...new Set([...app.redirectUris, ...exact])];
    const confidential = app.type === 'web';
    // A client that cannot be valid is no client: a web application without a secret, one without redirect URIs.
    if (!uris.length || (confidential && !app.clientSecretHash)) return undefined;
    return {
      client_id: app.id,
      client_name: app.name,
      application_type: native ? 'native' : 'web',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: uris,
      post_logout_redirect_uris: uris,
      token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
      ...(confidential ? { client_secret: app.clientSecretHash } : {}),
      id_token_signed_response_alg: alg,
      require_auth_time: true,
    };
  }

  const policy = interactionPolicy.base();
  // The provider's session follows the Gatehouse browser session: gone, another user, or another session than the
  // one the grant's tokens name, and the user signs in again (prompt=none answers login_required).
  policy.get('login').checks.push(
    new Check(
      'gatehouse_session',
      'the Gatehouse sign-in session ended',
      'login_required',
      async (ctx: ProviderContext) => {
        const { session, client } = ctx.oidc;
        if (!session.accountId) return Check.NO_NEED_TO_PROMPT;
        const browser = await deps.login.browserSession(readCookie(ctx.get('cookie'), REFRESH_COOKIE) || undefined);
        if (!browser || browser.user.id !== session.accountId) return Check.REQUEST_PROMPT;
        const grantId = session.grantIdFor(client.clientId);
        if (grantId && (await linkOf(grantId)) !== browser.sessionId) return Check.REQUEST_PROMPT;
        return Check.NO_NEED_TO_PROMPT;
      },
    ),
  );
  // `acr_values` naming the multi-factor acr: a session that passed one factor goes through the interaction, which
  // asks for a second one (the hosted step-up page) before the code is issued.
  policy.get('login').checks.push(
    new Check('gatehouse_acr', 'a second factor is requested', 'login_required', async (ctx: ProviderContext) => {
      const { session, params } = ctx.oidc;
      if (!session.accountId) return Check.NO_NEED_TO_PROMPT;
      if (
        !String(params.acr_values ?? '')
          .split(' ')
          .includes(ACR_MFA)
      )
        return Check.NO_NEED_TO_PROMPT;
      return session.acr === ACR_MFA ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
    }),
  );
  policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 1);

  const brand = { name: 'Gatehouse' };
  const Provider = mod.default;
  const provider: Provider = new Provider(deps.issuer, {
    adapter: adapterClass(deps.db, clientMetadata),
    clients: [],
    jwks: { keys: [jwk] },
    cookies: {
      keys: [deps.cookieKey],
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    routes: {
      authorization: '/oidc/auth',
      token: '/oidc/token',
      end_session: '/oidc/session/end',
      revocation: '/oidc/token/revocation',
      introspection: '/oidc/token/introspection',
      jwks: '/oidc/jwks',
      userinfo: '/oidc/me',
      pushed_authorization_request: '/oidc/request',
      code_verification: '/oidc/device',
      device_authorization: '/oidc/device/auth',
      backchannel_authentication: '/oidc/backchannel',
      challenge: '/oidc/challenge',
    },
    responseTypes: ['code'],
    acrValues: [ACR_SINGLE_FACTOR, ACR_MFA],
    scopes: SCOPES,
    claims: CLAIMS,
    extraParams: EXTRA_PARAMS,
    clientDefaults: { id_token_signed_response_alg: alg },
    enabledJWA: { idTokenSigningAlgValues: [alg] },
    pkce: { required: (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod === 'none' },
    interactions: {
      url: async (_ctx: unknown, interaction: { uid: string }) => `/oidc/interaction/${interaction.uid}`,
      policy,
    },
    // The user row alone (one statement): the claims need no memberships, roles or groups, and the provider asks on
    // every authorization and every code exchange.
    findAccount: async (_ctx: unknown, sub: string) => {
      const user = isUuid(sub) ? await findById(deps.db, sub) : undefined;
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          ...(user.email ? { email: user.email } : {}),
          email_verified: user.verified,
          name: user.name,
          ...(user.profile_picture_url ? { picture: user.profile_picture_url } : {}),
        }),
      };
    },
    // The platform's user-token claims, computed from the Gatehouse session linked to the grant (its sid, account,
    // roles and permissions now): a dead session issues nothing.
    extraTokenClaims: async (
      _ctx: unknown,
      token: { kind: string; grantId?: string; accountId?: string; clientId?: string },
    ) => {
      if (token.kind !== 'AccessToken' || !token.grantId) return undefined;
      const sid = await linkOf(token.grantId);
      if (!sid) throw new errors.InvalidGrant('the sign-in session of this grant ended');
      try {
        // The client is the application: JWT templates may target it.
        const { claims } = await deps.login.reissue.sessionClaims(sid, {
          userId: token.accountId,
          applicationId: token.clientId,
        });
        const { sub: _sub, aud: _aud, ...rest } = claims;
        return rest;
      } catch (err) {
        if (err instanceof AppError && err.status < 500) throw new errors.InvalidGrant(err.message);
        throw err;
      }
    },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: deps.ttl.accessToken,
      AuthorizationCode: deps.ttl.code,
      IdToken: 3600,
      RefreshToken: deps.ttl.refreshToken,
      Interaction: 3600,
      Session: deps.ttl.refreshToken,
      Grant: deps.ttl.refreshToken,
    },
    features: {
      devInteractions: { enabled: false },
      // The userinfo endpoint is the platform's (routes.ts): it takes the JWT access tokens issued for the environment.
      userinfo: { enabled: false },
      introspection: {
        enabled: true,
        allowedPolicy: async (
          _ctx: unknown,
          client: { clientAuthMethod: string; clientId: string },
          token: { clientId: string },
        ) => client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId: string }) =>
          token.clientId === client.clientId,
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: logoutPage(brand),
        postLogoutSuccessSource: loggedOutPage(brand),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`resource must be ${resource}`);
          return {
            scope: SCOPES.join(' '),
            audience: deps.environment.id,
            accessTokenFormat: 'jwt',
            accessTokenTTL: deps.ttl.accessToken,
            jwt: { sign: { alg } },
          };
        },
      },
    },
    renderError: errorPage(brand),
  });
  // X-Forwarded-* are set by the hand-over (service.ts) from PUBLIC_URL and the address Fastify trusted.
  provider.proxy = true;

  // Client secrets are stored as SHA-256 (application credentials): compare the hash of the one presented.
  provider.Client.prototype.compareClientSecret = async function (this: { clientSecret?: string }, actual: string) {
    return Boolean(this.clientSecret) && sameHex(this.clientSecret!, sha256Hex(actual));
  };
  // Every ID token names its provider session (`sid`), not only those of clients with back-channel logout.
  provider.Client.prototype.includeSid = () => true;
  // at_hash in the token endpoint's ID token too (oidc-provider adds it only in front-channel responses): the access
  // token's value is kept when it is made, and the ID token of the same response hashes it.
  const accessTokens = new WeakMap<object, string>();
  const saveAccessToken = provider.AccessToken.prototype.save;
  provider.AccessToken.prototype.save = async function (this: object) {
    const value: string = await saveAccessToken.call(this);
    accessTokens.set(this, value);
    return value;
  };
  const issueIdToken = provider.IdToken.prototype.issue;
  provider.IdToken.prototype.issue = function (this: any, opts?: { use?: string }) {
    const at = this.ctx?.oidc?.entities?.AccessToken;
    if (opts?.use === 'idtoken' && this.ctx?.oidc?.route === 'token' && at && accessTokens.has(at))
      this.set('at_hash', accessTokens.get(at));
    return issueIdToken.call(this, opts);
  };
  // An environment's wildcard redirect entries (allowedRedirectUrls) count too, with the environment's own rule.
  for (const method of ['redirectUriAllowed', 'postLogoutRedirectUriAllowed']) {
    const exact = provider.Client.prototype[method];
    provider.Client.prototype[method] = function (this: unknown, value: string) {
      if (exact.call(this, value)) return true;
      try {
        return wildcards.length > 0 && Boolean(assertAllowedRedirect(wildcards, value, 'redirect_uri'));
      } catch {
        return false;
      }
    };
  }
  return provider;
}

export type LinkOf = (grantId: string) => Promise<string | undefined>;
