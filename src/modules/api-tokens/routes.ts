import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { grantorOf, type UserGrantor } from '../roles/index.ts';
import type { AccessTokensService } from './access.service.ts';
import type { Caller } from './claims.ts';
import * as S from './schema.ts';
import type { ApiTokensService } from './service.ts';

/** A delete answers 200 with an empty body (no JSON): documented, never serialised. */
const NO_BODY = { description: 'no body' } as const;

const READ = 'fe.secure.read.tenantApiTokens';
const WRITE = 'fe.secure.write.tenantApiTokens';
const DELETE = 'fe.secure.delete.tenantApiTokens';
const TAGS = ['machine access'];
const TENANT_HEADER = Type.Object({ 'gatehouse-tenant-id': Type.Optional(Type.String()) });
const USER_HEADERS = Type.Object({
  'gatehouse-tenant-id': Type.Optional(Type.String()),
  'gatehouse-user-id': Type.Optional(Type.String()),
});

export function callerOf(req: FastifyRequest): Caller {
  const a = req.auth!;
  return a.kind === 'vendor' ? { kind: 'vendor' } : { ...(grantorOf(a) as UserGrantor), machine: Boolean(a.actor) };
}

/** The user whose personal tokens a call manages: the caller itself, or (vendor) the user named by the headers. */
function personOf(req: FastifyRequest): { tenantId: string; userId: string } {
  const a = req.auth!;
  if (a.kind === 'user') {
    if (a.actor)
      throw new AppError(
        'MACHINE_TOKEN_NOT_ALLOWED',
        "Personal tokens are managed with the user's own token or an environment token, not a machine token",
      );
    return { tenantId: a.tenantId, userId: a.userId };
  }
  const tenantId = tenantHeader(req);
  if (!tenantId) throw new AppError('TENANT_HEADER_REQUIRED');
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId) throw new AppError('USER_HEADER_REQUIRED');
  return { tenantId, userId };
}

export const apiTokensRoutes: FastifyPluginAsyncTypebox<{
  apiTokens: ApiTokensService;
  accessTokens: AccessTokensService;
}> = async (app, { apiTokens, accessTokens }) => {
  // -- exchange and refresh (public: the credentials are the body) --
  app.post(
    '/identity/resources/auth/v2/api-token',
    {
      config: guard.public,
      schema: {
        tags: TAGS,
        summary: 'Exchange an API token (client id and secret) for an access and a refresh token',
        body: S.ApiTokenAuthBody,
        response: { 200: S.ApiTokenAuthResponse },
      },
    },
    async (req) => apiTokens.exchange(req.body.clientId, req.body.secret, { ip: req.ip }, req.auditInline?.bind(req)),
  );

  app.post(
    '/identity/resources/auth/v2/api-token/token/refresh',
    {
      config: guard.public,
      schema: {
        tags: TAGS,
        summary: 'Refresh an API-token session (the refresh token rotates)',
        body: S.ApiTokenRefreshBody,
        response: { 200: S.ApiTokenAuthResponse },
      },
    },
    async (req) => apiTokens.refresh(req.body.refreshToken, { ip: req.ip }, req.auditInline?.bind(req)),
  );

  // -- account client-credentials tokens --
  for (const version of ['v1', 'v2']) {
    app.post(
      `/identity/resources/tenants/api-tokens/${version}`,
      {
        config: guard.any(WRITE),
        schema: {
          tags: TAGS,
          summary: 'Create an account API token (client credentials; the secret is shown once)',
          headers: TENANT_HEADER,
          body: S.CreateTenantApiToken,
          response: { 201: S.CreatedTenantApiToken },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await apiTokens.createTenantToken(accountOf(req), callerOf(req), req.body)),
    );
  }

  app.get(
    '/identity/resources/tenants/api-tokens/v1',
    {
      config: guard.any(READ),
      schema: {
        tags: TAGS,
        summary: "List the account's API tokens",
        headers: TENANT_HEADER,
        response: { 200: Type.Array(S.TenantApiToken) },
      },
    },
    async (req) => apiTokens.listTenantTokens(accountOf(req)),
  );

  app.patch(
    '/identity/resources/tenants/api-tokens/v1/:id',
    {
      config: guard.any(WRITE),
      schema: {
        tags: TAGS,
        summary: 'Update an account API token (description, metadata, roles, permissions)',
        headers: TENANT_HEADER,
        params: S.IdParams,
        body: S.UpdateTenantApiToken,
        response: { 200: S.TenantApiToken },
      },
    },
    async (req) => apiTokens.updateTenantToken(accountOf(req), req.params.id, callerOf(req), req.body),
  );

  app.delete(
    '/identity/resources/tenants/api-tokens/v1/:id',
    {
      config: guard.any(DELETE),
      schema: {
        tags: TAGS,
        summary: 'Delete an account API token (its access tokens stop working at once)',
        headers: TENANT_HEADER,
        params: S.IdParams,
        response: { 200: NO_BODY },
      },
    },
    async (req, reply) => {
      await apiTokens.deleteTenantToken(accountOf(req), req.params.id);
      return reply.status(200).send();
    },
  );

  // -- user (personal) client-credentials tokens --
  app.post(
    '/identity/resources/users/api-tokens/v1',
    {
      config: guard.identity(),
      schema: {
        tags: TAGS,
        summary: 'Create a personal API token of a user (client credentials; secret shown once)',
        headers: USER_HEADERS,
        body: S.CreateUserApiToken,
        response: { 201: S.CreatedUserApiToken },
      },
    },
    async (req, reply) => {
      const p = personOf(req);
      return reply.status(201).send(await apiTokens.createUserToken(p.tenantId, p.userId, req.body));
    },
  );

  app.get(
    '/identity/resources/users/api-tokens/v1',
    {
      config: guard.any(),
      schema: {
        tags: TAGS,
        summary: "List a user's personal API tokens",
        headers: USER_HEADERS,
        response: { 200: Type.Array(S.UserApiToken) },
      },
    },
    async (req) => {
      const p = personOf(req);
      return apiTokens.listUserTokens(p.tenantId, p.userId);
    },
  );

  app.delete(
    '/identity/resources/users/api-tokens/v1/:id',
    {
      config: guard.any(),
      schema: {
        tags: TAGS,
        summary: 'Delete a personal API token',
        headers: USER_HEADERS,
        params: S.IdParams,
        response: { 200: NO_BODY },
      },
    },
    async (req, reply) => {
      const p = personOf(req);
      await apiTokens.deleteUserToken(p.tenantId, p.userId, req.params.id);
      return reply.status(200).send();
    },
  );

  // -- account access tokens --
  app.post(
    '/identity/resources/tenants/access-tokens/v1',
    {
      config: guard.any(WRITE),
      schema: {
        tags: TAGS,
        summary: 'Create a long-lived account access token (the token is shown once)',
        headers: TENANT_HEADER,
        body: S.CreateTenantAccessToken,
        response: { 201: S.TenantAccessToken },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await accessTokens.createTenantToken(accountOf(req), callerOf(req), req.body)),
  );

  app.get(
    '/identity/resources/tenants/access-tokens/v1',
    {
      config: guard.any(READ),
      schema: {
        tags: TAGS,
        summary: "List the account's access tokens",
        headers: TENANT_HEADER,
        response: { 200: S.TenantAccessTokens },
      },
    },
    async (req) => accessTokens.listTenantTokens(accountOf(req)),
  );

  app.delete(
    '/identity/resources/tenants/access-tokens/v1/:id',
    {
      config: guard.any(DELETE),
      schema: {
        tags: TAGS,
        summary: 'Delete an account access token',
        headers: TENANT_HEADER,
        params: S.IdParams,
        response: { 200: NO_BODY },
      },
    },
    async (req, reply) => {
      await accessTokens.deleteTenantToken(accountOf(req), req.params.id);
      return reply.status(200).send();
    },
  );

  // -- user (personal) access tokens --
  app.post(
    '/identity/resources/users/access-tokens/v1',
    {
      config: guard.identity(),
      schema: {
        tags: TAGS,
        summary: 'Create a long-lived personal access token (shown once)',
        headers: USER_HEADERS,
        body: S.CreateUserAccessToken,
        response: { 201: S.UserAccessToken },
      },
    },
    async (req, reply) => {
      const p = personOf(req);
      return reply.status(201).send(await accessTokens.createUserToken(p.tenantId, p.userId, req.body));
    },
  );

  app.get(
    '/identity/resources/users/access-tokens/v1',
    {
      config: guard.any(),
      schema: {
        tags: TAGS,
        summary: "List a user's personal access tokens",
        headers: USER_HEADERS,
        response: { 200: S.UserAccessTokens },
      },
    },
    async (req) => {
      const p = personOf(req);
      return accessTokens.listUserTokens(p.tenantId, p.userId);
    },
  );

  app.delete(
    '/identity/resources/users/access-tokens/v1/:id',
    {
      config: guard.any(),
      schema: {
        tags: TAGS,
        summary: 'Delete a personal access token',
        headers: USER_HEADERS,
        params: S.IdParams,
        response: { 200: NO_BODY },
      },
    },
    async (req, reply) => {
      const p = personOf(req);
      await accessTokens.deleteUserToken(p.tenantId, p.userId, req.params.id);
      return reply.status(200).send();
    },
  );

  // -- vendor-only lookups that verifiers call --
  const vendorTenant = (req: FastifyRequest) => {
    const t = tenantHeader(req);
    if (!t) throw new AppError('TENANT_HEADER_REQUIRED');
    return t;
  };

  app.get(
    '/identity/resources/vendor-only/users/access-tokens/v1/active',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: "Ids of the account's access tokens that are still active",
        headers: TENANT_HEADER,
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async (req) => accessTokens.activeIds(vendorTenant(req)),
  );

  app.get(
    '/identity/resources/vendor-only/users/access-tokens/v1/:id',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: "A user access token's current roles and permissions (404 when not active)",
        headers: TENANT_HEADER,
        params: S.IdParams,
        response: { 200: S.UserAccessTokenData },
      },
    },
    async (req) => accessTokens.userTokenData(vendorTenant(req), req.params.id),
  );

  app.get(
    '/identity/resources/vendor-only/tenants/access-tokens/v1/:id',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: "An account access token's current roles and permissions (404 when not active)",
        headers: TENANT_HEADER,
        params: S.IdParams,
        response: { 200: S.TenantAccessTokenData },
      },
    },
    async (req) => accessTokens.tenantTokenData(vendorTenant(req), req.params.id),
  );
};
