import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { readCookie } from '../../http/cookies.ts';
import { assertAllowedRedirect, type EnvironmentService } from '../environment/index.ts';
import type { LoginService } from './login.service.ts';
import { discoveryDocument, DiscoveryDocument } from './oauth.discovery.ts';
import { installOAuthErrors, OAuthError, OAuthErrorBody, toOAuthError } from './oauth.errors.ts';
import { LoginResponse } from './schema.ts';
import type { ClientInfo, UsedSettings } from './sign-in.types.ts';

/** The client_credentials exchange: the api-tokens module's (built on this one), passed in by src/routes.ts. */
export interface ClientCredentialsExchange {
  clientCredentials(
    clientId: string,
    secret: string,
    client: { ip?: string },
  ): Promise<{ access_token: string; expires_in: number }>;
}

/**
 * The OpenID provider's share of these endpoints (src/modules/oidc), passed in by src/routes.ts when it is enabled:
 * one token endpoint and one logout endpoint for every client, the provider answering the requests that are its own.
 */
export interface OidcHandoff {
  /** The provider's endpoints and capabilities, added to the discovery document. */
  metadata: Record<string, string | string[]>;
  /** Whether the provider answers this token request: an authorization code, or a refresh token it issued. */
  ownsTokenRequest(body: { grant_type?: string; refresh_token?: string }): Promise<boolean>;
  /** Whether the provider answers this logout: an OpenID client's (RP-initiated logout names client_id or id_token_hint). */
  ownsLogout(query: Record<string, unknown>): boolean;
  /** Hands the request to the provider; the reply is hijacked (`body`: the already parsed form). */
  handle(req: FastifyRequest, reply: FastifyReply, body?: Record<string, unknown>): Promise<void>;
}

export interface OAuthRouteDeps {
  login: LoginService;
  environment: EnvironmentService;
  /** The account/user API token exchange (client_credentials); without it that grant is not offered. */
  apiTokens?: ClientCredentialsExchange;
  refreshCookieName: string;
  /** The auth routes' own refresh cookie writer (null clears it). */
  setRefreshCookie: (reply: FastifyReply, token: string | null, used?: UsedSettings) => Promise<void>;
  client: (req: FastifyRequest) => ClientInfo;
  /** The OpenID provider (authorization code grants, its refresh tokens, RP-initiated logout); absent when off. */
  oidc?: OidcHandoff;
}

const tags = ['oauth'];
const Param = Type.Optional(Type.String({ maxLength: 4096 }));
const TokenBody = Type.Object({
  grant_type: Param,
  refresh_token: Param,
  client_id: Param,
  client_secret: Param,
  scope: Param,
  // The authorization_code grant (RFC 6749 4.1.3, RFC 7636), answered by the OpenID provider.
  code: Param,
  redirect_uri: Param,
  code_verifier: Param,
  resource: Param,
});
const TokenAnswer = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Number(),
  refresh_token: Type.Optional(Type.String()),
});
const errors = { 400: OAuthErrorBody, 401: OAuthErrorBody };

/** Client credentials from HTTP Basic (RFC 6749 section 2.3.1: each part form-urlencoded) or the body, never both. */
function clientCredentials(req: FastifyRequest, body: { client_id?: string; client_secret?: string }) {
  const h = req.headers.authorization;
  const basic = typeof h === 'string' && /^basic\s+/i.test(h) ? h.replace(/^basic\s+/i, '').trim() : undefined;
  if (basic !== undefined) {
    if (body.client_id !== undefined || body.client_secret !== undefined)
      throw new OAuthError(
        'invalid_request',
        'Send the client credentials once: HTTP Basic or client_id/client_secret in the body, not both',
      );
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    const unescape = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        return s;
      }
    };
    if (at < 1)
      throw new OAuthError('invalid_client', 'The Basic credentials must be client_id:client_secret', 401, {
        'www-authenticate': 'Basic realm="gatehouse"',
      });
    return { clientId: unescape(decoded.slice(0, at)), secret: unescape(decoded.slice(at + 1)), basic: true };
  }
  if (body.client_id === undefined && body.client_secret === undefined)
    throw new OAuthError(
      'invalid_client',
      'Client authentication is required: HTTP Basic or client_id and client_secret',
    );
  if (!body.client_id) throw new OAuthError('invalid_request', 'client_id is required with client_secret');
  if (!body.client_secret) throw new OAuthError('invalid_request', 'client_secret is required with client_id');
  return { clientId: body.client_id, secret: body.client_secret, basic: false };
}

/**
 * The OAuth 2.0 / OIDC surface (wire.md sections 1-3): discovery, the token endpoint (refresh_token and
 * client_credentials grants), the hosted login's silent refresh and RP-initiated logout. An encapsulated plugin
 * whose failures are RFC 6749 errors `{error, error_description}`.
 */
export const oauthRoutes: FastifyPluginAsyncTypebox<OAuthRouteDeps> = async (app, deps) => {
  const { login } = deps;
  installOAuthErrors(app);
  // RFC 6749 clients post forms; JSON is accepted too (the platform's parser).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const cookie = (req: FastifyRequest) => readCookie(req.headers.cookie, deps.refreshCookieName) || undefined;
  // The refresh's audit entry carries this route's success status (the refresh service names the refresh route's).
  const audit = (req: FastifyRequest, status: number) =>
    req.auditInline ? (_s: number, body: Record<string, unknown>) => req.auditInline!(status, body) : undefined;

  for (const url of ['/oauth/.well-known/openid-configuration', '/.well-known/openid-configuration']) {
    app.get(
      url,
      {
        config: guard.public,
        schema: { tags, summary: 'OpenID Connect discovery (provider metadata)', response: { 200: DiscoveryDocument } },
      },
      async (_req, reply) => {
        const { algorithm } = await deps.environment.config();
        reply.header('cache-control', 'public, max-age=300');
        return discoveryDocument({
          issuer: login.issuer,
          algorithm,
          clientCredentials: Boolean(deps.apiTokens),
          oidc: deps.oidc?.metadata,
        });
      },
    );
  }

  app.post(
    '/oauth/token',
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'Token endpoint (RFC 6749): grant_type refresh_token or client_credentials; authorization_code when the OpenID provider is on',
        body: TokenBody,
        response: { 200: TokenAnswer, ...errors },
      },
    },
    async (req, reply) => {
      const body = req.body ?? {};
      if (deps.oidc && (await deps.oidc.ownsTokenRequest(body))) return deps.oidc.handle(req, reply, body);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
      if (body.grant_type === 'refresh_token') {
        const fromCookie = body.refresh_token ? undefined : cookie(req);
        const token = body.refresh_token || fromCookie;
        if (!token)
          throw new OAuthError(
            'invalid_request',
            `refresh_token is required (or the ${deps.refreshCookieName} cookie)`,
          );
        const used: UsedSettings = {};
        const r = await login.refresh(token, used, deps.client(req), audit(req, 200));
        // A browser that sent the cookie gets the rotated token in it, as from the refresh route.
        if (fromCookie) await deps.setRefreshCookie(reply, r.refreshToken, used);
        return {
          access_token: r.accessToken,
          token_type: 'Bearer' as const,
          expires_in: r.expiresIn,
          refresh_token: r.refreshToken,
        };
      }
      if (body.grant_type === 'client_credentials' && deps.apiTokens) {
        const creds = clientCredentials(req, body);
        try {
          // No refresh token (RFC 6749 section 4.4.3): the client authenticates again when the token expires. Nothing is
          // written but the audit entry, staged by the audit hook before the answer goes out.
          const r = await deps.apiTokens.clientCredentials(creds.clientId, creds.secret, { ip: req.ip });
          return { access_token: r.access_token, token_type: 'Bearer' as const, expires_in: r.expires_in };
        } catch (err) {
          const e = toOAuthError(err);
          if (e.error === 'invalid_client' && creds.basic)
            throw new OAuthError(e.error, e.message, 401, { 'www-authenticate': 'Basic realm="gatehouse"' });
          throw e;
        }
      }
      throw new OAuthError(
        'unsupported_grant_type',
        `grant_type ${body.grant_type} is not supported: use ${deps.apiTokens ? 'refresh_token or client_credentials' : 'refresh_token'}`,
      );
    },
  );

  app.post(
    '/oauth/authorize/silent',
    {
      config: guard.public,
      schema: {
        tags,
        summary: `Silent sign-in of the hosted login: rotates the ${deps.refreshCookieName} cookie, answers the login response`,
        response: { 200: LoginResponse, 401: OAuthErrorBody },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const token = cookie(req);
      if (!token) throw new OAuthError('login_required', `No session: the ${deps.refreshCookieName} cookie is missing`);
      const used: UsedSettings = {};
      const r = await login.refresh(token, used, deps.client(req), audit(req, 200)).catch((err) => {
        const e = toOAuthError(err);
        throw e.error === 'invalid_grant' ? new OAuthError('login_required', e.message) : e;
      });
      await deps.setRefreshCookie(reply, r.refreshToken, used);
      return r;
    },
  );

  app.get(
    '/oauth/logout',
    {
      config: guard.public,
      schema: {
        tags,
        summary: `End the session of the ${deps.refreshCookieName} cookie; redirect to post_logout_redirect_uri when it is in allowedRedirectUrls`,
        querystring: Type.Object({
          post_logout_redirect_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          state: Type.Optional(Type.String({ maxLength: 2000 })),
        }),
        response: {
          200: Type.Object({}),
          302: Type.Null({ description: 'redirect to post_logout_redirect_uri' }),
          400: OAuthErrorBody,
        },
      },
    },
    async (req, reply) => {
      if (deps.oidc?.ownsLogout(req.query)) return deps.oidc.handle(req, reply);
      const { post_logout_redirect_uri: redirect, state } = req.query;
      // Checked first: a refused redirect changes nothing (the session stays).
      if (redirect)
        assertAllowedRedirect(
          (await deps.environment.settings()).allowedRedirectUrls ?? [],
          redirect,
          'post_logout_redirect_uri',
        );
      const refreshToken = cookie(req);
      if (refreshToken) await login.logout({ refreshToken });
      await deps.setRefreshCookie(reply, null);
      reply.header('cache-control', 'no-store');
      if (!redirect) return {};
      const to = new URL(redirect);
      if (state) to.searchParams.set('state', state);
      return reply.redirect(to.toString(), 302);
    },
  );
};
