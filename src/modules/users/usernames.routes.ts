import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { PageEnvelopeOf, pageEnvelope } from '../../http/paging.ts';
import {
  Empty,
  PhraseQuery,
  User,
  UserParams,
  UsernameAnswer,
  UsernameBody,
  UsernameListItem,
  UsernameParams,
  UsernamesQuery,
} from './schema.ts';
import type { UsersService } from './service.ts';
import { asSeenBy } from './consent.ts';

const N = '/identity/resources/usernames/v1';
const UserHeader = Type.Object({
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 64, description: 'environment token: the user the call acts on' }),
  ),
});

/** The user a call acts on: a user token's own, or the gatehouse-user-id header of an environment call. */
function actingUser(req: FastifyRequest): string {
  if (req.auth?.kind === 'user') return req.auth.userId;
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const id = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!id) throw new AppError('USER_HEADER_REQUIRED');
  return id;
}
/** The account a call is scoped to: a user token's, or the tenant header of an environment call (none: the environment). */
const scope = (req: FastifyRequest) => (req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req));

/** Usernames, the fuzzy user search, and the self-service unlock. */
export const usernamesRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.get(
    N,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags: ['usernames'],
        summary:
          "Users' usernames (of the account of the token or tenant header; all for an environment token without one), a page",
        querystring: UsernamesQuery,
        response: { 200: PageEnvelopeOf(UsernameListItem) },
      },
    },
    async (req) => {
      const r = await users.listUsernames(req.query, scope(req));
      return pageEnvelope(r.items, {
        total: r.total,
        limit: r.limit,
        page: r.page,
        path: N,
        query: { ...req.query, userIds: req.query.userIds?.join(',') },
      });
    },
  );

  app.post(
    N,
    {
      config: guard.identity(),
      schema: {
        tags: ['usernames'],
        summary:
          "Set a user's username (a user token: your own; an environment token: the gatehouse-user-id header's user); 201 when the user had none, 200 when it replaced one; 409 when taken",
        headers: UserHeader,
        body: UsernameBody,
        response: { 200: UsernameAnswer, 201: UsernameAnswer },
      },
    },
    async (req, reply) => {
      const { created, ...answer } = await users.setUsername(actingUser(req), req.body.username, scope(req));
      return reply.status(created ? 201 : 200).send(answer);
    },
  );

  app.delete(
    `${N}/:username`,
    {
      config: guard.identity(),
      schema: {
        tags: ['usernames'],
        summary: 'Remove a username (a user token: only your own); the user keeps signing in with the email',
        params: UsernameParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await users.deleteUsername(
        req.params.username,
        req.auth?.kind === 'user' ? { owner: req.auth.userId } : { tenantId: tenantHeader(req) },
      );
      return {};
    },
  );

  app.get(
    `${N}/me`,
    {
      config: guard.any(),
      schema: {
        tags: ['usernames'],
        summary: "Your username (an environment token: the gatehouse-user-id header's user); 404 when none",
        headers: UserHeader,
        response: { 200: UsernameAnswer },
      },
    },
    async (req) => users.usernameOf(actingUser(req)),
  );

  app.get(
    '/identity/resources/users/v1/query/phrase',
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags: ['users'],
        summary:
          'Fuzzy user search: users whose name, email or username contains the phrase or has a word like it, best first (default 10, at most 200)',
        querystring: PhraseQuery,
        response: { 200: Type.Object({ items: Type.Array(User) }) },
      },
    },
    async (req) => {
      const found = await users.searchUsers(
        req.query,
        req.auth?.kind === 'user' ? req.auth.tenantId : (tenantHeader(req) ?? req.query._tenantId),
      );
      return { items: found.items.map((u) => asSeenBy(req.auth, u)) };
    },
  );

  app.post(
    '/identity/resources/users/v3/me/unlock',
    {
      config: guard.public,
      schema: {
        tags: ['users'],
        summary:
          'Unlock yourself with the token of an unlock link (one use, 1 hour): 200 unlocked, 400 unknown token, 410 used or expired',
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: Empty },
      },
    },
    async (req) => (await users.unlockWithToken(req.body.token), {}),
  );

  app.post(
    '/identity/resources/users/v1/:userId/links/generate-unlock-token',
    {
      config: guard.vendor,
      schema: {
        tags: ['users'],
        summary:
          'Generate an unlock token for a locked user (1 hour, single use) to deliver by other means; earlier ones are void; 409 when not locked',
        params: UserParams,
        response: { 201: Type.Object({ token: Type.String(), userId: Type.String(), expiresAt: Type.String() }) },
      },
    },
    async (req, reply) => reply.status(201).send(await users.generateUnlockToken(req.params.userId)),
  );
};
