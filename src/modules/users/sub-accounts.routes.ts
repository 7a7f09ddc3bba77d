import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { PageEnvelopeOf, pageEnvelope } from '../../http/paging.ts';
import type { Caller } from './accounts.service.ts';
import { CreateUser, Empty, InviteUser, ListUsersQuery, RoleIdsBody, User, UserParams } from './schema.ts';
import { grantorOf } from '../roles/index.ts';
import type { UsersService } from './service.ts';
import { asSeenBy } from './consent.ts';

const tags = ['sub-account users'];
const S = '/identity/resources/sub-tenants/users';
const READ = 'fe.secure.read.users';
const WRITE = 'fe.secure.write.users';
const DELETE = 'fe.secure.delete.users';

const SubAccountHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'required: the account whose users are managed (alias: frontegg-tenant-id); a user token reaches its own account and the sub-accounts its access opens',
    }),
  ),
});
const RemoveHeaders = Type.Object({
  ...SubAccountHeaders.properties,
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 64, description: 'the user to remove, when the body has no userId' }),
  ),
});
const RolesAnswer = Type.Object({
  tenantId: Type.String(),
  userId: Type.String(),
  roles: Type.Array(Type.Object({}, { additionalProperties: true })),
});
const SetRolesBody = Type.Object({
  roleIds: Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 100,
    uniqueItems: true,
    description: 'the roles the user has afterwards; [] removes them all',
  }),
});

/** The caller as the users service sees it (the guard has run, so `req.auth` is set). */
export const callerOf = (req: FastifyRequest): Caller => grantorOf(req.auth!);

/** The sub-account a call acts on: the tenant header, required with either kind of token. */
function subAccountOf(req: FastifyRequest): string {
  const tenantId = tenantHeader(req);
  if (!tenantId)
    throw new AppError(
      'TENANT_HEADER_REQUIRED',
      'Header gatehouse-tenant-id is required: it names the account (your own or a sub-account) whose users are managed',
    );
  return tenantId;
}

/**
 * Users of a sub-account, managed from above (registered by usersRoutes). The account is the tenant header's; an
 * environment token reaches any account, a user token only its own account and the sub-accounts its sub-account
 * access opens (users.reachAccount). Each route then runs the users service's own operation in that account.
 */
export const subAccountUsersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  /** The account named by the header, once the caller's reach and permission there are checked. */
  async function reached(req: FastifyRequest, permission: string): Promise<string> {
    const tenantId = subAccountOf(req);
    await users.reachAccount(callerOf(req), tenantId, permission);
    return tenantId;
  }

  app.get(
    `${S}/v1`,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'List the users of a sub-account (tenant header), paged as the user lists',
        headers: SubAccountHeaders,
        querystring: ListUsersQuery,
        response: { 200: PageEnvelopeOf(User) },
      },
    },
    async (req) => {
      const tenantId = await reached(req, READ);
      const r = await users.list({ ...req.query, _tenantId: undefined }, tenantId);
      const items = r.items.map((u) => asSeenBy(req.auth, u, tenantId));
      return pageEnvelope(items, { total: r.total, limit: r.limit, page: r.page, path: `${S}/v1`, query: req.query });
    },
  );

  app.post(
    `${S}/v1`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Create a user in a sub-account (body as POST /identity/resources/users/v1)',
        headers: SubAccountHeaders,
        body: CreateUser,
        response: { 201: User },
      },
    },
    async (req, reply) => {
      const tenantId = await reached(req, WRITE);
      await users.assertFirstMemberRoles(tenantId, callerOf(req), req.body.roleIds);
      return reply
        .status(201)
        .send(asSeenBy(req.auth, await users.create(tenantId, req.body, callerOf(req)), tenantId));
    },
  );

  // The invitation belongs to the invitations module; the route exists when the composition root lent it (UsersDeps.invite).
  const invite = users.inviter();
  if (invite) {
    app.post(
      `${S}/v2`,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary:
            'Invite a user (new or existing) to a sub-account and email the invitation (body as POST /identity/resources/users/v2)',
          headers: SubAccountHeaders,
          body: InviteUser,
          response: { 201: User },
        },
      },
      async (req, reply) => {
        const tenantId = await reached(req, WRITE);
        await users.assertFirstMemberRoles(tenantId, callerOf(req), req.body.roleIds);
        return reply.status(201).send(asSeenBy(req.auth, await invite(tenantId, req.body, callerOf(req)), tenantId));
      },
    );
  }

  app.delete(
    `${S}/v1`,
    {
      config: guard.any(DELETE),
      schema: {
        tags,
        summary:
          'Remove a user from a sub-account (the user: body userId, else the gatehouse-user-id header); a user left with no account is deleted',
        headers: RemoveHeaders,
        body: Type.Optional(Type.Object({ userId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) })),
        response: { 200: Empty },
      },
    },
    async (req) => {
      const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
      const userId = req.body?.userId ?? (Array.isArray(h) ? h[0] : h)?.trim();
      if (!userId)
        throw new AppError(
          'VALIDATION',
          'body.userId is required (or the header gatehouse-user-id): the user to remove',
          { fields: ['userId'] },
        );
      const tenantId = await reached(req, DELETE);
      await users.remove(userId, tenantId);
      return {};
    },
  );

  app.post(
    `${S}/v1/:userId/roles`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Assign roles to a user in a sub-account',
        headers: SubAccountHeaders,
        params: UserParams,
        body: RoleIdsBody,
        response: { 201: RolesAnswer },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await users.assignRoles(await reached(req, WRITE), req.params.userId, req.body.roleIds, callerOf(req))),
  );

  app.patch(
    `${S}/v1/:userId/roles`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: "Set a user's roles in a sub-account (replaces them; [] removes all)",
        headers: SubAccountHeaders,
        params: UserParams,
        body: SetRolesBody,
        response: { 200: RolesAnswer },
      },
    },
    async (req) => users.setRoles(await reached(req, WRITE), req.params.userId, req.body.roleIds, callerOf(req)),
  );

  app.delete(
    `${S}/v1/:userId/roles`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Unassign roles from a user in a sub-account',
        headers: SubAccountHeaders,
        params: UserParams,
        body: RoleIdsBody,
        response: { 200: RolesAnswer },
      },
    },
    async (req) => users.unassignRoles(await reached(req, WRITE), req.params.userId, req.body.roleIds, callerOf(req)),
  );

  // Users per account, for a list of accounts: what the accounts screen shows beside each account. A user token
  // counts only accounts whose users it may read (its own, the sub-accounts its access opens); any other is a 403.
  app.post(
    '/identity/resources/tenants/users/v1/count',
    {
      config: guard.any(READ),
      schema: {
        tags: ['users'],
        summary:
          'Count the users of each account asked (0 for an account with none, or no such account), in the order asked',
        body: Type.Object({
          tenantIds: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
            minItems: 1,
            maxItems: 100,
            description: 'the accounts; repeated ids are answered once',
          }),
          excludeInvisibleUsers: Type.Optional(
            Type.Boolean({ description: 'leave invisible users out of the counts' }),
          ),
        }),
        response: {
          200: Type.Array(
            Type.Object({
              tenantId: Type.String(),
              totalUsers: Type.Integer(),
              totalAccessAllowedUsers: Type.Integer({ description: 'members allowed into sub-accounts' }),
            }),
          ),
        },
      },
    },
    async (req) => {
      if (req.auth?.kind === 'user') {
        for (const tenantId of new Set(req.body.tenantIds)) await users.reachAccount(callerOf(req), tenantId, READ);
      }
      return users.countUsers(req.body.tenantIds, req.body.excludeInvisibleUsers === true);
    },
  );
};
