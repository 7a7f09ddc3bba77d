import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { UserIdsQuery } from '../roles/index.ts';
import { UserGroupsResponse } from './schema.ts';
import type { GroupsService } from './service.ts';

const headers = Type.Object({
  'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 255, description: 'the account (alias: frontegg-tenant-id); without it, every account each user belongs to' })),
});

/**
 * GET /identity/resources/users/v3/groups (vendor): the groups of several users, per account. With the tenant header,
 * their groups in that account (404 when it names no live account); without it, in every account they belong to.
 */
export const userGroupsRoutes: FastifyPluginAsyncTypebox<{ groups: GroupsService }> = async (app, { groups }) => {
  app.get('/identity/resources/users/v3/groups', {
    config: guard.vendor,
    schema: {
      tags: ['user groups'],
      summary: 'Groups of users (ids), per account: the tenant header\'s account, or every account each user belongs to; unknown users and non-members are absent',
      headers,
      querystring: UserIdsQuery,
      response: { 200: UserGroupsResponse },
    },
  }, async (req) => ({ items: await groups.userGroups(req.query.ids, tenantHeader(req)) }));
};
