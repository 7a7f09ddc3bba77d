import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { BULK_INVITE_MAX, BULK_ROLES_MAX_TENANTS } from './bulk.service.ts';
import { UserParams } from './schema.ts';
import { grantorOf } from '../roles/index.ts';
import type { UsersService } from './service.ts';
import { InviteUser } from './schema.ts';

const tags = ['users'];
const RoleIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, uniqueItems: true });
const TenantId = Type.String({ minLength: 1, maxLength: 255 });
const When = { createdAt: Type.String(), completedAt: Type.Union([Type.String(), Type.Null()]) };
const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);

const InviteTask = Type.Object({
  id: Type.String({ description: 'the task id, for GET /identity/resources/users/bulk/v1/status/{id}' }),
  tenantId: Type.String(),
  status: Status,
  total: Type.Integer(),
  processed: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  users: Type.Array(Type.Object({ index: Type.Integer(), email: Type.String(), userId: Type.String() }), {
    description: 'the users invited, by their index in the request',
  }),
  errors: Type.Array(
    Type.Object({ index: Type.Integer(), email: Type.String(), errorCode: Type.String(), message: Type.String() }),
    { description: 'the users refused, by their index in the request' },
  ),
  ...When,
});
const RolesTask = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  status: Status,
  totalTenants: Type.Integer(),
  processedTenants: Type.Integer(),
  addedRoleIds: Type.Array(Type.String()),
  removedRoleIds: Type.Array(Type.String()),
  errors: Type.Array(Type.Object({ message: Type.String(), tenantId: Type.String() })),
  ...When,
});

/** Bulk invitations, a user's roles across accounts, and moving an account's users to another account. */
export const bulkRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.post(
    '/identity/resources/users/bulk/v1/invite',
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: `Invite up to ${BULK_INVITE_MAX} users to the account (each as POST /identity/resources/users/v2); done when answered: the task lists who was invited and who was refused, by index`,
        body: Type.Object({ users: Type.Array(InviteUser, { minItems: 1, maxItems: BULK_INVITE_MAX }) }),
        response: { 202: InviteTask },
      },
    },
    async (req, reply) => {
      return reply.status(202).send(await users.bulkInvite(accountOf(req), req.body.users, grantorOf(req.auth!)));
    },
  );

  app.get(
    '/identity/resources/users/bulk/v1/status/:id',
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: 'A bulk invitation task (a user token: of its own account only)',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: InviteTask },
      },
    },
    async (req) => users.bulkInviteStatus(req.params.id, req.auth?.kind === 'user' ? req.auth.tenantId : undefined),
  );

  app.patch(
    '/identity/resources/vendor-only/users/v1/:userId/roles/bulk',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: `Add and remove a user's roles in many accounts at once (tenantIds, at most ${BULK_ROLES_MAX_TENANTS}; none: every account of the user), in one transaction; accounts that cannot take the change are listed in errors`,
        params: UserParams,
        body: Type.Object({
          addRoleIds: Type.Optional(RoleIds),
          removeRoleIds: Type.Optional(RoleIds),
          tenantIds: Type.Optional(Type.Array(TenantId, { minItems: 1, maxItems: BULK_ROLES_MAX_TENANTS })),
        }),
        response: {
          200: Type.Object({
            userId: Type.String(),
            affectedTenants: Type.Integer({ description: 'accounts updated' }),
            rolesAdded: Type.Array(Type.String()),
            rolesRemoved: Type.Array(Type.String()),
            taskId: Type.String({ description: 'for GET .../bulk-roles/status/{taskId}' }),
            errors: Type.Array(Type.Object({ message: Type.String(), tenantId: Type.String() })),
          }),
        },
      },
    },
    async (req) => users.bulkRoles(req.params.userId, req.body),
  );

  app.get(
    '/identity/resources/vendor-only/users/v1/bulk-roles/status/:taskId',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'A bulk role update task',
        params: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: RolesTask },
      },
    },
    async (req) => users.bulkRolesStatus(req.params.taskId),
  );

  app.put(
    '/identity/resources/users/v1/tenants/migrate',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          "Move every user of an account to another (environment roles kept, else the target's default roles; members of both keep their target membership); the source is left without users",
        body: Type.Object({ srcTenantId: TenantId, targetTenantId: TenantId }),
        response: {
          200: Type.Object({
            srcTenantId: Type.String(),
            targetTenantId: Type.String(),
            movedUsers: Type.Integer({ description: 'members the source had' }),
            alreadyMembers: Type.Integer({ description: 'of those, already members of the target' }),
          }),
        },
      },
    },
    async (req) => users.migrateAccountUsers(req.body.srcTenantId, req.body.targetTenantId),
  );
};
