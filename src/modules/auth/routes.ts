import { REFRESH_COOKIE, refreshCookie } from './refresh-cookie.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { readCookie } from '../../http/cookies.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { Empty, User, type UsersService } from '../users/index.ts';
import type { LoginService } from './login.service.ts';
import { oauthRoutes, type ClientCredentialsExchange, type OidcHandoff } from './oauth.routes.ts';
import { meTokenRoutes } from './me-token.routes.ts';
import {
  LoginBody,
  LoginResponse,
  RefreshBody,
  StepUpBody,
  Session,
  SessionPolicy,
  SessionPolicyBody,
} from './schema.ts';
import type { SessionsService } from './sessions.service.ts';
import type { UsedSettings } from './sign-in.types.ts';

const tags = ['sign-in'];
const A = '/identity/resources/auth/v1';

export interface AuthRouteDeps {
  login: LoginService;
  sessions: SessionsService;
  users: UsersService;
  environment: EnvironmentService;
  secureCookies: boolean;
  /** The API token exchange behind /oauth/token's client_credentials grant (src/routes.ts: ctx.machine.apiTokens). */
  apiTokens?: ClientCredentialsExchange;
  /** The OpenID provider's share of /oauth/token, /oauth/logout and discovery (when it is enabled). */
  oidc?: OidcHandoff;
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRouteDeps> = async (app, deps) => {
  const { login, sessions } = deps;

  /**
   * The refresh token rides in an HttpOnly cookie for browsers, and in the body for other clients. `used` carries the
   * settings the sign-in or refresh already read in its transaction; otherwise they are read here.
   */
  async function setRefreshCookie(reply: FastifyReply, token: string | null, used: UsedSettings = {}) {
    const s = used.settings ?? (await deps.environment.settings());
    reply.header('set-cookie', refreshCookie(token, s, deps.secureCookies));
  }
  const client = (req: FastifyRequest) => ({
    ip: req.ip,
    userAgent: req.headers['user-agent'],
    cookie: req.headers.cookie,
  });
  await app.register(meTokenRoutes, { login });
  await app.register(oauthRoutes, {
    login,
    environment: deps.environment,
    apiTokens: deps.apiTokens,
    oidc: deps.oidc,
    refreshCookieName: REFRESH_COOKIE,
    setRefreshCookie,
    client,
  });

  app.post(
    `${A}/user`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Sign in with email (or username) and password',
        body: LoginBody,
        response: { 200: LoginResponse },
      },
    },
    async (req, reply) => {
      const used: UsedSettings = {};
      // The sign-in's statements store the request's audit entry (session start, or the MFA challenge): ClientInfo.audit.
      const r = await login.login(req.body, { ...client(req), audit: (body) => req.auditInline?.(200, body) }, used);
      if ('refreshToken' in r) await setRefreshCookie(reply, r.refreshToken, used);
      return r;
    },
  );

  app.post(
    `${A}/user/step-up/generate`,
    {
      config: guard.user(),
      schema: {
        tags,
        summary:
          'Re-authenticate my session (password, or a code of my authenticator app): a token with auth_time now, same sid',
        body: StepUpBody,
        response: { 200: LoginResponse },
      },
    },
    async (req, reply) => {
      const used: UsedSettings = {};
      const r = await login.stepUp(req.auth as UserAuth, req.body, client(req), used);
      await setRefreshCookie(reply, r.refreshToken, used);
      return r;
    },
  );

  app.post(
    `${A}/user/token/refresh`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Rotate the refresh token (cookie gh_refresh, or {refreshToken} in the body)',
        body: RefreshBody,
        response: { 201: LoginResponse },
      },
    },
    async (req, reply) => {
      const token = req.body?.refreshToken ?? readCookie(req.headers.cookie, REFRESH_COOKIE);
      if (!token)
        throw new AppError('INVALID_REFRESH_TOKEN', 'No refresh token: send the gh_refresh cookie or {refreshToken}');
      const used: UsedSettings = {};
      const r = await login.refresh(token, used, client(req), req.auditInline?.bind(req));
      await setRefreshCookie(reply, r.refreshToken, used);
      return reply.status(201).send(r);
    },
  );

  app.post(
    `${A}/logout`,
    {
      config: guard.optional,
      schema: {
        tags,
        summary: 'End the session (refresh cookie or body, or the access token)',
        body: RefreshBody,
        response: { 201: Empty },
      },
    },
    async (req, reply) => {
      const sessionId = req.auth?.kind === 'user' ? req.auth.sessionId : undefined;
      await login.logout({
        refreshToken: req.body?.refreshToken ?? readCookie(req.headers.cookie, REFRESH_COOKIE),
        sessionId,
      });
      await setRefreshCookie(reply, null);
      return reply.status(201).send({});
    },
  );

  app.put(
    '/identity/resources/users/v1/tenant',
    {
      // Switching accounts is the user's own: impersonation, delegated and machine tokens cannot (no recency needed).
      config: guard.identity({ userOnly: true, recent: false }),
      schema: {
        tags,
        summary: 'Switch my active account (the next refresh issues tokens for it)',
        body: Type.Object({ tenantId: Type.String({ minLength: 1, maxLength: 255 }) }),
        response: { 200: User },
      },
    },
    async (req) => {
      const me = req.auth as UserAuth;
      await login.switchAccount(me.userId, me.sessionId, req.body.tenantId);
      return deps.users.get(me.userId, req.body.tenantId).catch(() => deps.users.get(me.userId));
    },
  );

  const S = '/identity/resources/users/sessions/v1';
  app.get(
    `${S}/me`,
    {
      config: guard.user(),
      schema: { tags: ['sessions'], summary: 'My active sessions', response: { 200: Type.Array(Session) } },
    },
    async (req) => sessions.list((req.auth as UserAuth).userId, (req.auth as UserAuth).sessionId),
  );

  app.get(
    `${S}/me/current`,
    {
      config: guard.user(),
      schema: { tags: ['sessions'], summary: 'The session of the calling token', response: { 200: Session } },
    },
    async (req) => sessions.current((req.auth as UserAuth).userId, (req.auth as UserAuth).sessionId),
  );

  app.post(
    `${S}/revoke`,
    {
      config: guard.user(),
      schema: {
        tags: ['sessions'],
        summary: 'Revoke some of my sessions by id (the calling one too, when listed)',
        body: Type.Object({
          sessionIds: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100, uniqueItems: true }),
        }),
        response: { 200: Type.Object({ revoked: Type.Integer() }) },
      },
    },
    async (req) => sessions.revokeMany((req.auth as UserAuth).userId, req.body.sessionIds),
  );

  app.delete(
    `${S}/me/all`,
    {
      config: guard.user(),
      schema: {
        tags: ['sessions'],
        summary: 'Revoke all my sessions except this one',
        response: { 200: Type.Object({ revoked: Type.Integer() }) },
      },
    },
    async (req) =>
      sessions.revokeAll(
        (req.auth as UserAuth).userId,
        (req.auth as UserAuth).sessionId ?? '00000000-0000-0000-0000-000000000000',
      ),
  );

  app.delete(
    `${S}/me/:id`,
    {
      config: guard.user(),
      schema: {
        tags: ['sessions'],
        summary: 'Revoke one of my sessions',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: Empty },
      },
    },
    async (req) => {
      await sessions.revokeMine((req.auth as UserAuth).userId, req.params.id);
      return {};
    },
  );

  app.delete(
    '/identity/resources/vendor-only/users/v1/:userId/sessions',
    {
      config: guard.vendor,
      schema: {
        tags: ['sessions'],
        summary: 'Revoke every session of a user',
        params: Type.Object({ userId: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ revoked: Type.Integer() }) },
      },
    },
    async (req) => {
      await deps.users.get(req.params.userId); // 404 for an unknown user
      return sessions.revokeAll(req.params.userId);
    },
  );

  const C = '/identity/resources/configurations/sessions/v1';
  const scope = (req: FastifyRequest) => (req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req));
  app.get(
    C,
    {
      config: guard.any('fe.secure.read.securityPolicy'),
      schema: {
        tags: ['sessions'],
        summary: 'Session policy of the account (tenant header) or of the environment',
        response: { 200: SessionPolicy },
      },
    },
    async (req) => sessions.getPolicy(scope(req)),
  );
  app.get(
    `${C}/vendor`,
    { config: guard.vendor, schema: { tags: ['sessions'], response: { 200: SessionPolicy } } },
    async () => sessions.getPolicy(),
  );
  app.post(
    C,
    {
      config: guard.any('fe.secure.write.securityPolicy'),
      schema: {
        tags: ['sessions'],
        summary: 'Set the session policy of the account (tenant header) or of the environment',
        body: SessionPolicyBody,
        response: { 201: SessionPolicy },
      },
    },
    async (req, reply) => reply.status(201).send(await sessions.setPolicy(scope(req), req.body)),
  );
};
