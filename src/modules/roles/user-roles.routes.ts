import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { UserIdsQuery, UserRolesResponse } from './schema.ts';
import type { RolesService } from './service.ts';

const headers = Type.Object({
  'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 255, description: 'the account (alias: frontegg-tenant-id); without it, every account each user belongs to' })),
});

/**
 * GET /identity/resources/users/v3/roles (vendor): the roles assigned to several users, per account. With the tenant
 * header, their roles in that account (404 when it names no live account); without it, in every account they belong to.
 */
export const userRolesRoutes: FastifyPluginAsyncTypebox<{ roles: RolesService }> = async (app, { roles }) => {
  app.get('/identity/resources/users/v3/roles', {
    config: guard.vendor,
    schema: {
      tags: ['roles'],
      summary: 'Roles of users (ids), per account: the tenant header\'s account, or every account each user belongs to; unknown users and non-members are absent',
      headers,
      querystring: UserIdsQuery,
      response: { 200: UserRolesResponse },
    },
  }, async (req) => ({ items: await roles.userRoles(req.query.ids, tenantHeader(req)) }));
};
