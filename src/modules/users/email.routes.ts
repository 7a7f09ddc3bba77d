import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import {
  EmailBody,
  EmailQuery,
  namesPhone,
  UpdateProfile,
  User,
  UserParams,
  VerifyPasswordAnswer,
  VerifyPasswordBody,
} from './schema.ts';
import type { UsersService } from './service.ts';

const tags = ['users'];
const U = '/identity/resources/users';
const TenantHeader = Type.Object({ 'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 255 })) });
const ActingHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({ maxLength: 255, description: 'required with an environment token: the account' }),
  ),
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 64, description: 'required with an environment token: the user' }),
  ),
});

/** The user a profile call acts on: a user token's own user in its active account; an environment token's headers. */
function actingUser(req: FastifyRequest): { userId: string; tenantId: string } {
  const auth = req.auth!;
  if (auth.kind === 'user') return { userId: auth.userId, tenantId: auth.tenantId };
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId) throw new AppError('USER_HEADER_REQUIRED');
  return { userId, tenantId: accountOf(req) };
}

/** Registered by usersRoutes: a user by email, a user's email, the vendor's password check, the own-profile update. */
export const emailRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  // A static path: it wins over GET /users/v1/:userId (find-my-way matches static segments first).
  app.get(
    `${U}/v1/email`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get a user by email (environment token; with the tenant header, as a member of that account)',
        querystring: EmailQuery,
        headers: TenantHeader,
        response: { 200: User },
      },
    },
    async (req) => users.getByEmail(req.query.email, tenantHeader(req)),
  );

  app.put(
    `${U}/v1`,
    {
      config: guard.identity({ when: namesPhone }),
      schema: {
        tags,
        summary:
          "Update the own profile: a user token's user in its account, or (environment token) the user and account of the headers; vendorMetadata, mfaBypass, externalId and email are refused",
        headers: ActingHeaders,
        body: UpdateProfile,
        response: { 200: User },
      },
    },
    async (req) => {
      const { userId, tenantId } = actingUser(req);
      return users.updateProfile(userId, tenantId, req.body);
    },
  );

  app.put(
    `${U}/v1/:userId/email`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Change a user's email (environment token); the user becomes unverified",
        params: UserParams,
        body: EmailBody,
        response: { 200: User },
      },
    },
    async (req) => users.changeEmail(req.params.userId, req.body.email),
  );

  app.post(
    '/identity/resources/vendor-only/users/v1/passwords/verify',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Check a user's password (environment token); not a sign-in: no lockout count",
        body: VerifyPasswordBody,
        response: { 200: VerifyPasswordAnswer },
      },
    },
    async (req, reply) => {
      const { isValid, userId } = await users.verifyPassword(req.body.email, req.body.password);
      if (userId) req.auditTarget = { type: 'user', id: userId };
      return reply.status(200).send({ isValid });
    },
  );
};
