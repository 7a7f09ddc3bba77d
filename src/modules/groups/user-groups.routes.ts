import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { UserIdsQuery } from '../roles/index.ts';
import { UserGroupsResponse } from './schema.ts';
import type { GroupsService } from './service.ts';

const headers = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'environment token: the account (alias: frontegg-tenant-id); without it, every account each user belongs to. Ignored with a user token',
    }),
  ),
});

/**
 * GET /identity/resources/users/v3/groups: the groups of several users, per account. A user token sees the members
 * of its own account only; an environment token those of the tenant header's account (404 when it names no live
 * account), or without it every account they belong to.
 */
export const userGroupsRoutes: FastifyPluginAsyncTypebox<{ groups: GroupsService }> = async (app, { groups }) => {
  app.get(
    '/identity/resources/users/v3/groups',
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags: ['user groups'],
        summary:
          "Groups of users (ids), per account: a user token's account, the tenant header's, or every account each user belongs to; unknown users and non-members are absent",
        headers,
        querystring: UserIdsQuery,
        response: { 200: UserGroupsResponse },
      },
    },
    async (req) => groups.userGroups(req.query.ids, req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req)),
  );
};
