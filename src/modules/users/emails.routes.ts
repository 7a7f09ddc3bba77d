import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { pageEnvelope, PageEnvelopeOf } from '../../http/paging.ts';
import { Empty } from './schema.ts';
import type { UsersService } from './service.ts';

const tags = ['users'];
const E = '/identity/resources/users/emails/v1';
const Email = Type.String({
  minLength: 3,
  maxLength: 320,
  description: 'an email address (stored trimmed and lower-cased)',
});
const UserEmail = Type.Object({
  id: Type.String({ description: "the address's id; the primary address has its user's id" }),
  userId: Type.String(),
  email: Type.String(),
  verified: Type.Boolean(),
  isPrimary: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
const Headers = Type.Object({
  'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 255 })),
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 64, description: 'required with an environment token: the user acted on' }),
  ),
});
const ListQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'a 0-based page index' })),
  _sortBy: Type.Optional(Type.Union([Type.Literal('userId'), Type.Literal('email')], { default: 'email' })),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
  _email: Type.Optional(Type.String({ maxLength: 320, description: 'exact address (any case)' })),
  userIds: Type.Optional(Type.String({ maxLength: 4000, description: 'comma-separated user ids' })),
});
const EmailParams = Type.Object({ emailId: Type.String({ minLength: 1, maxLength: 64 }) });
const VendorParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) });
const VendorEmailParams = Type.Object({
  userId: Type.String({ minLength: 1, maxLength: 64 }),
  emailId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** The user acted on: a user token's own; an environment token's gatehouse-user-id header. */
function actingUser(req: FastifyRequest): string {
  const auth = req.auth!;
  if (auth.kind === 'user') return auth.userId;
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId) throw new AppError('USER_HEADER_REQUIRED');
  return userId;
}

/**
 * A user's email addresses (registered by usersRoutes): the primary one is users.email; others are added (proven with an
 * emailed code), verified, deleted, or made primary. User tokens act on themselves; environment tokens on the user in
 * gatehouse-user-id, or on any user through the vendor routes.
 */
export const userEmailsRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  const ops = users.emails;

  app.get(
    E,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary:
          "Every user's addresses (environment token: all users, or the tenant header's account; user token: its account)",
        querystring: ListQuery,
        headers: Headers,
        response: { 200: PageEnvelopeOf(UserEmail) },
      },
    },
    async (req) => {
      const tenantId = req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req);
      const q = req.query;
      const limit = q._limit ?? 50;
      const page = q._offset ?? 0;
      const r = await ops.list({
        userIds: q.userIds,
        email: q._email,
        tenantId,
        sortBy: q._sortBy ?? 'email',
        order: q._order ?? 'ASC',
        limit,
        page,
      });
      return pageEnvelope(r.items, { total: r.total, limit, page, path: E, query: q });
    },
  );

  app.get(
    `${E}/me`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: "The user's addresses, the primary first",
        headers: Headers,
        response: { 200: Type.Array(UserEmail) },
      },
    },
    async (req) => ops.listOfUser(actingUser(req)),
  );

  app.post(
    E,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          'Add an address to the user: unverified, a 6-digit code is emailed to it (again for an unverified one: 200)',
        headers: Headers,
        body: Type.Object({ email: Email }),
        response: { 200: UserEmail, 201: UserEmail },
      },
    },
    async (req, reply) => {
      const r = await ops.add(actingUser(req), req.body.email, false, true);
      return reply.status(r.created ? 201 : 200).send(r.email);
    },
  );

  app.post(
    `${E}/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Verify an added address with the code emailed to it',
        headers: Headers,
        body: Type.Object({ email: Email, code: Type.String({ minLength: 1, maxLength: 32 }) }),
        response: { 200: UserEmail },
      },
    },
    async (req) => ops.verify(actingUser(req), req.body),
  );

  app.delete(
    `${E}/:emailId`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Delete a secondary address of the user (the primary: 409)',
        headers: Headers,
        params: EmailParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await ops.remove(actingUser(req), req.params.emailId);
      return {};
    },
  );

  app.post(
    `${E}/me/primary`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Make a verified address primary (sign-in address); under the user emails policy allowEmailChange',
        headers: Headers,
        body: Type.Object({ email: Email }),
        response: { 200: Empty },
      },
    },
    async (req) => {
      await ops.makePrimary(actingUser(req), req.body.email, true);
      return {};
    },
  );

  app.post(
    `${E}/vendor/:userId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Add an address to any user (isVerified: already proven, no code sent)',
        params: VendorParams,
        body: Type.Object({ email: Email, isVerified: Type.Optional(Type.Boolean()) }),
        response: { 200: UserEmail, 201: UserEmail },
      },
    },
    async (req, reply) => {
      const r = await ops.add(req.params.userId, req.body.email, req.body.isVerified ?? false, false);
      return reply.status(r.created ? 201 : 200).send(r.email);
    },
  );

  app.delete(
    `${E}/vendor/:userId/:emailId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete a secondary address of any user (the primary: 409)',
        params: VendorEmailParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await ops.remove(req.params.userId, req.params.emailId);
      return {};
    },
  );

  app.post(
    `${E}/vendor/:userId/primary`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Make a verified address of any user primary (not subject to the user emails policy)',
        params: VendorParams,
        body: Type.Object({ email: Email }),
        response: { 200: Empty },
      },
    },
    async (req) => {
      await ops.makePrimary(req.params.userId, req.body.email, false);
      return {};
    },
  );
};
