import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import {
  Category,
  CategoryParams,
  Classification,
  CreateAccountRole,
  CreateCategory,
  CreatePermissions,
  CreateRoles,
  Permission,
  PermissionParams,
  Role,
  RoleListQuery,
  RolePage,
  RoleParams,
  SetPermissionRoles,
  SetRolePermissions,
  SetRoleTenant,
  TenantHeaders,
  UpdateCategory,
  UpdatePermission,
  UpdateRole,
} from './schema.ts';
import type { Actor, RolesService } from './service.ts';
import { userRolesRoutes } from './user-roles.routes.ts';
import { grantorOf } from './grants.ts';

const ROLES = '/identity/resources/roles/v1';
const ROLES_V2 = '/identity/resources/roles/v2';
const PERMISSIONS = '/identity/resources/permissions/v1';
const CATEGORIES = `${PERMISSIONS}/categories`;
const READ = 'fe.secure.read.roles';
const WRITE = 'fe.secure.write.roles';

/** The scope a call acts on: a user's own account; for the environment, the tenant header's account, or none. */
function readScope(req: FastifyRequest): string | undefined {
  return req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req);
}
const writeScope = readScope;

/** Requests whose create body was one role (the browser SDK's addRole): they are answered one role. */
const singleCreate = new WeakSet<FastifyRequest>();

const actorOf = (req: FastifyRequest): Actor => grantorOf(req.auth!);

export const rolesRoutes: FastifyPluginAsyncTypebox<{ roles: RolesService }> = async (app, { roles }) => {
  await app.register(userRolesRoutes, { roles });

  // -- roles v1 --
  {
    const tags = ['roles'];
    app.get(
      ROLES,
      {
        config: guard.any(READ),
        schema: {
          tags,
          summary:
            'Environment roles, plus the roles of the account named by the tenant header (a user token: its own account)',
          headers: TenantHeaders,
          response: { 200: Type.Array(Role) },
        },
      },
      async (req) => roles.list(readScope(req)),
    );

    // A user token (fe.secure.write.roles) writes its own account's roles only, within account-writes.ts's rule.
    app.post(
      ROLES,
      {
        config: guard.any(WRITE),
        // The browser SDK's addRole sends one role and reads one back; an array is the batch form.
        preValidation: async (req) => {
          if (req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body)) {
            singleCreate.add(req);
            req.body = [req.body] as typeof req.body;
          }
        },
        schema: {
          tags,
          summary:
            'Create roles (a list, or one role answered alone): environment roles, or roles of the account (tenant header; a user token: its own account)',
          headers: TenantHeaders,
          body: CreateRoles,
          response: { 201: Type.Union([Type.Array(Role), Role]) },
        },
      },
      async (req, reply) => {
        const created = await roles.create(writeScope(req), req.body, actorOf(req));
        return reply.status(201).send(singleCreate.has(req) ? created[0] : created);
      },
    );

    app.patch(
      `${ROLES}/:roleId`,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary:
            'Update a role (with the tenant header: an environment role or one of that account; a user token: a role of its account)',
          headers: TenantHeaders,
          params: RoleParams,
          body: UpdateRole,
          response: { 200: Role },
        },
      },
      async (req) => roles.update(req.params.roleId, req.body, writeScope(req), actorOf(req)),
    );

    app.delete(
      `${ROLES}/:roleId`,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary: 'Delete a role; users holding it lose it',
          headers: TenantHeaders,
          params: RoleParams,
          response: { 204: Type.Null({ description: 'role deleted' }) },
        },
      },
      async (req, reply) => {
        await roles.remove(req.params.roleId, writeScope(req), actorOf(req));
        return reply.status(204).send(null);
      },
    );

    app.put(
      `${ROLES}/:roleId/permissions`,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary: "Set the role's permissions (replaces the whole set)",
          headers: TenantHeaders,
          params: RoleParams,
          body: SetRolePermissions,
          response: { 200: Role },
        },
      },
      async (req) => roles.setPermissions(req.params.roleId, req.body.permissionIds, writeScope(req), actorOf(req)),
    );

    app.put(
      `${ROLES}/:roleId/tenant`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Move an environment role into an account',
          params: RoleParams,
          body: SetRoleTenant,
          response: { 200: Role },
        },
      },
      async (req) => roles.moveToAccount(req.params.roleId, req.body.tenantId),
    );
  }

  // -- account roles v2 --
  {
    const tags = ['account roles'];
    app.get(
      ROLES_V2,
      {
        config: guard.any(READ),
        schema: {
          tags,
          summary: "A page of roles: environment roles plus the account's (tenant header, or a user token's account)",
          headers: TenantHeaders,
          querystring: RoleListQuery,
          response: { 200: RolePage },
        },
      },
      async (req) => {
        const r = await roles.page(readScope(req), req.query);
        return pageEnvelope(r.items, {
          total: r.total,
          limit: r.limit,
          page: r.page,
          path: ROLES_V2,
          query: req.query,
        });
      },
    );

    app.post(
      ROLES_V2,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary:
            "Create a role of the account (tenant header, or a user token's own account), optionally copying a base role's permissions",
          headers: TenantHeaders,
          body: CreateAccountRole,
          response: { 200: Role },
        },
      },
      async (req) => roles.createAccountRole(accountOf(req), req.body, actorOf(req)),
    );

    app.get(
      `${ROLES_V2}/distinct-levels`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary:
            'Distinct levels of the environment roles (and of the account named by the tenant header), ascending',
          headers: TenantHeaders,
          response: { 200: Type.Array(Type.Integer()) },
        },
      },
      async (req) => roles.distinctLevels(tenantHeader(req)),
    );

    app.get(
      `${ROLES_V2}/distinct-tenants`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Ids of the accounts that have roles of their own, sorted',
          response: { 200: Type.Array(Type.String()) },
        },
      },
      async () => roles.distinctTenants(),
    );
  }

  // -- permissions --
  {
    const tags = ['permissions'];
    app.get(
      PERMISSIONS,
      {
        config: guard.any(READ),
        schema: { tags, summary: 'All permissions, in key order', response: { 200: Type.Array(Permission) } },
      },
      async () => roles.listPermissions(),
    );

    app.post(
      PERMISSIONS,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Create permissions (all or none)',
          body: CreatePermissions,
          response: { 201: Type.Array(Permission) },
        },
      },
      async (req, reply) => reply.status(201).send(await roles.createPermissions(req.body)),
    );

    app.put(
      `${PERMISSIONS}/classification`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary:
            'Set the classification (NEVER, ALWAYS, ASSIGNABLE) of permissions, all or none; answers the permission named first in permissionIds (a PermissionResponse)',
          body: Classification,
          response: { 200: Permission },
        },
      },
      async (req) => roles.classifyPermissions(req.body.permissionIds, req.body.type),
    );

    app.patch(
      `${PERMISSIONS}/:permissionId`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Update a permission (the key of a built-in one cannot change)',
          params: PermissionParams,
          body: UpdatePermission,
          response: { 200: Permission },
        },
      },
      async (req) => roles.updatePermission(req.params.permissionId, req.body),
    );

    app.delete(
      `${PERMISSIONS}/:permissionId`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Delete a permission (roles lose it); built-in ones cannot be deleted',
          params: PermissionParams,
          response: { 204: Type.Null({ description: 'permission deleted' }) },
        },
      },
      async (req, reply) => {
        await roles.deletePermission(req.params.permissionId);
        return reply.status(204).send(null);
      },
    );

    app.put(
      `${PERMISSIONS}/:permissionId/roles`,
      {
        config: guard.any(WRITE),
        schema: {
          tags,
          summary: "Set exactly which roles hold the permission (a user token: which of its own account's roles)",
          params: PermissionParams,
          body: SetPermissionRoles,
          response: { 200: Permission },
        },
      },
      async (req) => roles.setPermissionRoles(req.params.permissionId, req.body.roleIds, actorOf(req)),
    );
  }

  // -- permission categories --
  {
    const tags = ['permission categories'];
    app.get(
      CATEGORIES,
      {
        config: guard.any(READ),
        schema: { tags, summary: 'All permission categories', response: { 200: Type.Array(Category) } },
      },
      async () => roles.listCategories(),
    );

    app.post(
      CATEGORIES,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Create a category (the id is optional)',
          body: CreateCategory,
          response: { 201: Category },
        },
      },
      async (req, reply) => reply.status(201).send(await roles.createCategory(req.body)),
    );

    app.patch(
      `${CATEGORIES}/:categoryId`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Update a category',
          params: CategoryParams,
          body: UpdateCategory,
          response: { 200: Category },
        },
      },
      async (req) => roles.updateCategory(req.params.categoryId, req.body),
    );

    app.delete(
      `${CATEGORIES}/:categoryId`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Delete a category; its permissions stay, without a category. Answers the removed category',
          params: CategoryParams,
          response: { 200: Category },
        },
      },
      async (req) => roles.deleteCategory(req.params.categoryId),
    );
  }
};
