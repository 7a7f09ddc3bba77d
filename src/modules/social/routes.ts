import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { SignInAnswer, type SignInAnswerBody } from '../auth/index.ts';
import { acceptForms, refreshCookie } from '../sso/index.ts';
import * as S from './schema.ts';
import type { SocialService } from './service.ts';

export interface SocialRouteDeps {
  social: SocialService;
  environment: EnvironmentService;
  secureCookies: boolean;
}

const Url = Type.String({ maxLength: 2000 });
const Body = Type.Object({
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
  clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  secret: Type.Optional(Type.String({ maxLength: 10000 })),
  redirectUrl: Type.Optional(Url),
  active: Type.Optional(Type.Boolean()),
  scopes: Type.Optional(Type.String({ maxLength: 1000 })),
  additionalScopes: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })),
  authorizationUrl: Type.Optional(Url),
  tokenUrl: Type.Optional(Url),
  userInfoUrl: Type.Optional(Url),
  emailsUrl: Type.Optional(Url),
  issuer: Type.Optional(Url),
  jwksUrl: Type.Optional(Url),
  ssoLogoUrl: Type.Optional(Type.String({ maxLength: 2000 })),
  displayName: Type.Optional(Type.String({ maxLength: 200 })),
  teamId: Type.Optional(Type.String({ maxLength: 100 })),
  keyId: Type.Optional(Type.String({ maxLength: 100 })),
  allowSignups: Type.Optional(Type.Boolean()),
});
const Provider = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) });
const tags = ['social login'];

export const socialRoutes: FastifyPluginAsyncTypebox<SocialRouteDeps> = async (app, deps) => {
  const { social } = deps;
  acceptForms(app);

  for (const v of ['v1', 'v2']) {
    app.get(
      `/identity/resources/sso/${v}`,
      {
        config: guard.public,
        schema: {
          tags,
          summary: 'Active social login providers (no secrets)',
          response: { 200: S.SocialProviderList },
        },
      },
      async () => social.publicList(),
    );
  }
  // The same list for a signed-in user (the browser client's account screen, to connect another provider).
  app.get(
    '/identity/resources/sso/v2/authenticated',
    {
      config: guard.user(),
      schema: {
        tags,
        summary: 'Active social login providers, for a signed-in user (no secrets)',
        response: { 200: S.SocialProviderList },
      },
    },
    async () => social.publicList(),
  );
  app.post(
    '/identity/resources/sso/v2',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Configure a social login provider (by type; secret sealed, never answered)',
        body: Body,
        response: { 200: S.SocialProvider },
      },
    },
    async (req) => social.upsert(req.body),
  );
  app.delete(
    '/identity/resources/sso/v2/:provider',
    {
      config: guard.vendor,
      schema: { tags, summary: 'Remove a social login provider', params: Provider, response: { 200: S.Empty } },
    },
    async (req) => social.removeBuiltIn(req.params.provider),
  );

  const C = '/identity/resources/sso/custom/v1';
  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create a custom OAuth 2.0 / OIDC provider',
        body: Body,
        response: { 200: S.SocialProvider },
      },
    },
    async (req) => social.createCustom(req.body),
  );
  app.get(
    C,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Custom OAuth providers', response: { 200: S.SocialProviderList } },
    },
    async () => social.list(true),
  );
  app.patch(
    `${C}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update a custom OAuth provider',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        body: Body,
        response: { 200: S.SocialProvider },
      },
    },
    async (req) => social.updateCustom(req.params.id, req.body),
  );
  app.delete(
    `${C}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete a custom OAuth provider',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: S.Empty },
      },
    },
    async (req) => social.removeCustom(req.params.id),
  );

  const A = '/identity/resources/auth/v1/user/sso';
  app.post(
    `${A}/:provider/prelogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Start a social sign-in: answers the provider authorization URL (state, nonce, PKCE kept server-side)',
        params: Provider,
        body: Type.Optional(Type.Object({ redirectUri: Type.Optional(Url) })),
        response: { 200: S.PreloginAnswer },
      },
    },
    async (req) => social.prelogin(req.params.provider, req.body ?? {}),
  );
  app.post(
    `${A}/:provider/postlogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a social sign-in with the code and state (JSON, form post, or query)',
        params: Provider,
        querystring: Type.Object({
          code: Type.Optional(Type.String({ maxLength: 4000 })),
          state: Type.Optional(Type.String({ maxLength: 500 })),
        }),
        body: Type.Optional(
          Type.Object(
            {
              code: Type.Optional(Type.String({ maxLength: 4000 })),
              state: Type.Optional(Type.String({ maxLength: 500 })),
            },
            { additionalProperties: true },
          ),
        ),
        response: { 200: SignInAnswer },
      },
    },
    async (req, reply) => {
      const r = (await social.postlogin(
        req.params.provider,
        { code: req.body?.code ?? req.query.code, state: req.body?.state ?? req.query.state },
        { ip: req.ip, userAgent: req.headers['user-agent'], cookie: req.headers.cookie },
      )) as SignInAnswerBody;
      if (typeof r.refreshToken === 'string')
        await refreshCookie(reply, deps.environment, deps.secureCookies, r.refreshToken);
      return r;
    },
  );
};
