import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { Account } from '../tenants/index.ts';
import { namesPhone, UpdateProfile, User } from './schema.ts';
import type { UsersService } from './service.ts';

const tags = ['me'];
// The browser SDK's shapes (ITenantsResponse, GetCurrentUserTenantsResponse): account records with `vendorId`.
const AccountRecord = Type.Object({
  ...Account.properties,
  vendorId: Type.String({ description: 'the environment id' }),
});
const CurrentUserTenants = Type.Object({
  tenants: Type.Array(AccountRecord),
  activeTenant: Type.Optional(AccountRecord),
});
const me = (req: { auth?: unknown }) => req.auth as UserAuth;

/** Self-service routes: the signed-in user, in the account of their token. */
export const meRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  for (const version of ['v2', 'v3']) {
    app.get(
      `/identity/resources/users/${version}/me`,
      {
        config: guard.user(),
        schema: { tags, summary: 'The signed-in user', response: { 200: User } },
      },
      async (req) => users.get(me(req).userId, me(req).tenantId),
    );
  }

  app.put(
    '/identity/resources/users/v2/me',
    {
      config: guard.identity({ userOnly: true, when: namesPhone }),
      schema: {
        tags,
        summary: 'Update my profile (as PUT /identity/resources/users/v1 with a user token)',
        body: UpdateProfile,
        response: { 200: User },
      },
    },
    async (req) => users.updateProfile(me(req).userId, me(req).tenantId, req.body),
  );

  for (const version of ['v1', 'v3']) {
    app.get(
      `/identity/resources/users/${version}/me/tenants`,
      {
        config: guard.user(),
        schema: {
          tags,
          summary: 'The accounts I belong to and the active one (the account of my token)',
          response: { 200: CurrentUserTenants },
        },
      },
      async (req) => users.myAccounts(me(req).userId, me(req).tenantId),
    );
  }

  app.get(
    '/identity/resources/users/v2/me/tenants',
    {
      config: guard.user(),
      schema: { tags, summary: 'The accounts I belong to', response: { 200: Type.Array(AccountRecord) } },
    },
    async (req) => (await users.myAccounts(me(req).userId, me(req).tenantId)).tenants,
  );

  app.post(
    '/identity/resources/users/v1/passwords/change',
    {
      config: guard.identity({ recent: false }),
      schema: {
        tags,
        summary:
          "Change a password, the current one required (a user token: its own; an environment token: the gatehouse-user-id header's user)",
        headers: Type.Object({ 'gatehouse-user-id': Type.Optional(Type.String({ maxLength: 64 })) }),
        body: Type.Object({
          password: Type.String({ minLength: 1, maxLength: 1024 }),
          newPassword: Type.String({ minLength: 1, maxLength: 1024 }),
        }),
        response: {
          201: {
            description: 'password changed',
            content: { 'application/json': { schema: Type.Null({ description: 'the body is JSON null' }) } },
          },
        },
      },
    },
    async (req, reply) => {
      const userId = req.auth?.kind === 'user' ? req.auth.userId : req.headers['gatehouse-user-id'];
      if (!userId) throw new AppError('VALIDATION', 'headers.gatehouse-user-id is required with an environment token');
      const keepSessionId = req.auth?.kind === 'user' ? req.auth.sessionId : undefined;
      await users.changePassword(userId, req.body.password, req.body.newPassword, { ip: req.ip, keepSessionId });
      return reply.status(201).send(null);
    },
  );

  app.get(
    '/identity/resources/users/v1/me/authorization',
    {
      config: guard.user(),
      schema: {
        tags,
        summary: 'My roles and permissions in the active account',
        response: { 200: Type.Object({ roles: Type.Array(Type.Any()), permissions: Type.Array(Type.Any()) }) },
      },
    },
    async (req) => {
      const u = await users.get(me(req).userId, me(req).tenantId);
      return { roles: u.roles, permissions: u.permissions };
    },
  );
};
