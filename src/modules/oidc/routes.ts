import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, type UserAuth } from '../../http/auth.ts';
import { SCOPES } from './provider.ts';
import type { OidcService } from './service.ts';

/** The provider's own paths: everything under /oidc/ but the interaction pages and the userinfo route (ours). */
const ours = (path: string) => path.startsWith('/oidc/interaction/') || path === '/oidc/userinfo';

/**
 * Sends the provider's paths to oidc-provider before Fastify routes or parses anything (it reads the raw body
 * itself): a root onRequest hook, so the provider's 4xx pages and OAuth error bodies are its own.
 */
export function mountProvider(app: FastifyInstance, oidc: OidcService) {
  app.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    if (!path.startsWith('/oidc/') || ours(path)) return;
    await oidc.handle(req, reply);
  });
}

/**
 * What the auth module's /oauth/token, /oauth/logout and discovery hand to the provider (OidcHandoff): the one token
 * endpoint of every client and the one end-session endpoint, the provider answering its own requests.
 */
export function oidcHandoff(oidc: OidcService, issuer: string) {
  const base = issuer.replace(/\/+$/, '');
  return {
    metadata: {
      authorization_endpoint: `${base}/oidc/auth`,
      userinfo_endpoint: `${base}/oidc/userinfo`,
      revocation_endpoint: `${base}/oidc/token/revocation`,
      introspection_endpoint: `${base}/oidc/token/introspection`,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: SCOPES,
      response_modes_supported: ['query', 'form_post'],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    },
    async ownsTokenRequest(body: { grant_type?: string; refresh_token?: string }) {
      if (body.grant_type === 'authorization_code') return true;
      if (body.grant_type !== 'refresh_token' || !body.refresh_token) return false;
      return oidc.ownsRefreshToken(body.refresh_token);
    },
    ownsLogout: (query: Record<string, unknown>) => query.client_id !== undefined || query.id_token_hint !== undefined,
    async handle(req: FastifyRequest, reply: FastifyReply, body?: Record<string, unknown>) {
      const path = req.url.startsWith('/oauth/token') ? '/oidc/token' : '/oidc/session/end';
      await oidc.handle(req, reply, path, body);
    },
  };
}

const UserInfo = Type.Object(
  {
    sub: Type.String(),
    email: Type.Optional(Type.String()),
    email_verified: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
    picture: Type.Optional(Type.String()),
  },
  { description: 'the claims the scopes of the token release (all of them for a token without scope)' },
);

/**
 * The userinfo endpoint (OIDC Core 5.3) of the provider's access tokens, which are platform user tokens: the claims
 * the token's `scope` releases (openid: sub; email; profile). A user token without `scope` releases them all.
 */
export const oidcUserInfoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/oidc/userinfo',
      config: guard.user(),
      schema: { tags: ['oauth'], summary: 'OpenID Connect userinfo', response: { 200: UserInfo } },
      handler: async (req, reply) => {
        const { claims, userId } = req.auth as UserAuth;
        const scope = typeof claims.scope === 'string' ? claims.scope.split(' ') : undefined;
        const released = (s: string) => !scope || scope.includes(s);
        reply.header('cache-control', 'no-store');
        return {
          sub: userId,
          ...(released('email') && typeof claims.email === 'string'
            ? { email: claims.email, email_verified: claims.email_verified === true }
            : {}),
          ...(released('profile') && typeof claims.name === 'string' ? { name: claims.name } : {}),
          ...(released('profile') && typeof claims.profilePictureUrl === 'string' && claims.profilePictureUrl
            ? { picture: claims.profilePictureUrl }
            : {}),
        };
      },
    });
  }
};
