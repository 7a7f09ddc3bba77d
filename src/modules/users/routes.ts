import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import {
  CreateUser,
  Empty,
  ListUsersQuery,
  RoleIdsBody,
  TenantBody,
  UpdateUser,
  User,
  UserParams,
  VendorCreateUser,
} from './schema.ts';
import { grantorOf } from '../roles/index.ts';
import type { UsersService } from './service.ts';
import { asSeenBy } from './consent.ts';
import { emailRoutes } from './email.routes.ts';
import { subAccountUsersRoutes } from './sub-accounts.routes.ts';
import { teamRoutes } from './team.routes.ts';
import { usernamesRoutes } from './usernames.routes.ts';
import { bulkRoutes } from './bulk.routes.ts';
import { userEmailsRoutes } from './emails.routes.ts';

const tags = ['users'];
const U = '/identity/resources/users';
const Page = Type.Object({
  items: Type.Array(User),
  _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
  _links: Type.Object({}, { additionalProperties: true }),
});
const RolesAnswer = Type.Object({
  tenantId: Type.String(),
  userId: Type.String(),
  roles: Type.Array(Type.Object({}, { additionalProperties: true })),
});

/** Management routes: vendor tokens (account from the tenant header) and account admins (account from their token). */
export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  // By email, a user's email, the password check, and PUT /users/v1 (the own profile): email.routes.ts.
  await app.register(emailRoutes, { users });
  // Users of sub-accounts (sub-accounts.routes.ts) and the older team screen's routes (team.routes.ts).
  await app.register(subAccountUsersRoutes, { users });
  await app.register(teamRoutes, { users });
  // Usernames, the fuzzy search and self-service unlock (usernames.routes.ts); bulk invitations, roles, moves (bulk.routes.ts).
  await app.register(usernamesRoutes, { users });
  await app.register(bulkRoutes, { users });
  // A user's several email addresses (/users/emails/v1): emails.routes.ts.
  await app.register(userEmailsRoutes, { users });

  app.post(
    `${U}/v1`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: 'Create a user in an account (default roles when roleIds is empty)',
        body: CreateUser,
        response: { 201: User },
      },
    },
    async (req, reply) => {
      const created = await users.create(accountOf(req), req.body, grantorOf(req.auth!));
      return reply.status(201).send(asSeenBy(req.auth, created));
    },
  );

  app.post(
    '/identity/resources/vendor-only/users/v1',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create a user (vendor only; account in the body)',
        body: VendorCreateUser,
        response: { 201: User },
      },
    },
    async (req, reply) => reply.status(201).send(await users.create(req.body.tenantId, req.body)),
  );

  app.get(
    '/identity/resources/vendor-only/users/v1/:userId',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get a user by id regardless of account (vendor only)',
        params: UserParams,
        response: { 200: User },
      },
    },
    async (req) => users.get(req.params.userId),
  );

  app.get(
    `${U}/v1/:userId`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: { tags, summary: 'Get a user of the account', params: UserParams, response: { 200: User } },
    },
    async (req) => asSeenBy(req.auth, await users.get(req.params.userId, accountOf(req))),
  );

  for (const version of ['v2', 'v3']) {
    app.get(
      `${U}/${version}`,
      {
        config: guard.any('fe.secure.read.users'),
        schema: {
          tags,
          summary: 'List users (of the account in the tenant header or token; all users for a vendor without header)',
          querystring: ListUsersQuery,
          response: { 200: Page },
        },
      },
      async (req) => {
        const tenantId = req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req);
        const r = await users.list(req.query, tenantId);
        const items = r.items.map((u) => asSeenBy(req.auth, u));
        return pageEnvelope(items, {
          total: r.total,
          limit: r.limit,
          page: r.page,
          path: `${U}/${version}`,
          query: req.query,
        });
      },
    );
  }

  app.put(
    `${U}/v1/:userId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update a user globally (partial; phone numbers are added)',
        params: UserParams,
        body: UpdateUser,
        response: { 200: User },
      },
    },
    async (req) => users.update(req.params.userId, req.body),
  );

  app.delete(
    `${U}/v1/:userId`,
    {
      config: guard.any('fe.secure.delete.users'),
      schema: {
        tags,
        summary: 'Remove a user from the account (tenant header or token), or delete the user (vendor, no header)',
        params: UserParams,
        response: { 200: Empty },
      },
    },
    async (req, reply) => {
      const tenantId = req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req);
      await users.remove(req.params.userId, tenantId);
      return reply.status(200).send({});
    },
  );

  app.post(
    `${U}/v1/:userId/tenant`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Add a user to an account (default roles)',
        params: UserParams,
        body: TenantBody,
        response: { 201: User },
      },
    },
    async (req, reply) => reply.status(201).send(await users.addToAccount(req.params.userId, req.body.tenantId)),
  );

  app.put(
    `${U}/v1/:userId/tenant`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Set a user's active account",
        params: UserParams,
        body: TenantBody,
        response: { 200: User },
      },
    },
    async (req) => users.setActiveAccount(req.params.userId, req.body.tenantId),
  );

  app.post(
    `${U}/v1/:userId/roles`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: 'Assign roles to a user in the account',
        params: UserParams,
        body: RoleIdsBody,
        response: { 201: RolesAnswer },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await users.assignRoles(accountOf(req), req.params.userId, req.body.roleIds, grantorOf(req.auth!))),
  );

  app.delete(
    `${U}/v1/:userId/roles`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: 'Unassign roles from a user in the account',
        params: UserParams,
        body: RoleIdsBody,
        response: { 200: RolesAnswer },
      },
    },
    async (req) => users.unassignRoles(accountOf(req), req.params.userId, req.body.roleIds, grantorOf(req.auth!)),
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post(
      `/identity/resources/tenants/users/v1/:userId/${action}`,
      {
        config: guard.any('fe.secure.write.users'),
        schema: {
          tags,
          summary: `${action === 'disable' ? 'Disable' : 'Enable'} a user in the account`,
          params: UserParams,
          response: { 200: User },
        },
      },
      async (req) =>
        asSeenBy(req.auth, await users.setMembershipFlag(accountOf(req), req.params.userId, { is_disabled: disabled })),
    );
  }

  for (const [action, locked] of [
    ['lock', true],
    ['unlock', false],
  ] as const) {
    app.post(
      `${U}/v1/:userId/${action}`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: `${action === 'lock' ? 'Lock' : 'Unlock'} a user (sign-in refused while locked)`,
          params: UserParams,
          response: { 200: User },
        },
      },
      async (req) =>
        users.setFlags(
          req.params.userId,
          locked
            ? { is_locked: true, locked_until: null }
            : { is_locked: false, locked_until: null, failed_attempts: 0 },
        ),
    );
  }

  app.post(
    `${U}/v1/:userId/verify`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Mark a user verified', params: UserParams, response: { 200: User } },
    },
    async (req) => users.setFlags(req.params.userId, { verified: true }),
  );

  app.put(
    `${U}/v1/:userId/invisible`,
    {
      config: guard.vendor,
      schema: { tags, params: UserParams, body: Type.Object({ invisible: Type.Boolean() }), response: { 200: User } },
    },
    async (req) => users.setFlags(req.params.userId, { invisible: req.body.invisible }),
  );

  app.put(
    `${U}/v1/:userId/superuser`,
    {
      config: guard.vendor,
      schema: { tags, params: UserParams, body: Type.Object({ superUser: Type.Boolean() }), response: { 200: User } },
    },
    async (req) => users.setFlags(req.params.userId, { super_user: req.body.superUser }),
  );

  app.put(
    '/identity/resources/sub-tenants/users/v1/:userId/access',
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Allow or deny a user's access to the account's sub-accounts",
        params: UserParams,
        body: Type.Object({ allowAccess: Type.Boolean() }),
        response: { 200: User },
      },
    },
    async (req) => {
      const rec = await users.setMembershipFlag(accountOf(req), req.params.userId, {
        sub_account_access_allowed: req.body.allowAccess,
      });
      return asSeenBy(req.auth, rec);
    },
  );

  const TempConfig = Type.Object({ enabled: Type.Boolean() });
  // Read by the team screen (whether to offer temporary users): readers of the account's users see it; only the
  // environment changes it.
  app.get(
    `${U}/temporary/v1/configuration`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: 'Whether temporary users are enabled in the environment',
        response: { 200: TempConfig },
      },
    },
    async () => users.temporaryConfig(),
  );
  app.put(
    `${U}/temporary/v1/configuration`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Enable or disable temporary users', body: TempConfig, response: { 200: TempConfig } },
    },
    async (req) => users.temporaryConfig(req.body.enabled),
  );

  app.put(
    `${U}/temporary/v1/:userId`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Make a member temporary in the account (tenant header, or a user token's own account)",
        params: UserParams,
        body: Type.Object({ expirationInSeconds: Type.Integer({ minimum: 60, maximum: 31536000 }) }),
        response: { 201: Type.Object({ expirationInSeconds: Type.Integer() }) },
      },
    },
    async (req, reply) => {
      await users.setTemporary(accountOf(req), req.params.userId, req.body.expirationInSeconds);
      return reply.status(201).send({ expirationInSeconds: req.body.expirationInSeconds });
    },
  );

  app.delete(
    `${U}/temporary/v1/:userId`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: 'Make a temporary user permanent in the account',
        params: UserParams,
        response: { 200: User },
      },
    },
    async (req) => asSeenBy(req.auth, await users.setTemporary(accountOf(req), req.params.userId, null)),
  );
};
