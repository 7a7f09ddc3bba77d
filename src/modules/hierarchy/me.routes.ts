import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { guard, type UserAuth } from '../../http/auth.ts';
import { UserHierarchyResponse, UserTreeNodeSchema } from './schema.ts';
import type { HierarchyService } from './service.ts';

/**
 * GET /identity/resources/users/v2/me/hierarchy (user token): the accounts the signed-in user belongs to and the
 * sub-accounts those memberships open, as trees. Registered in a scope of its own for the self-referencing node
 * schema (see the tree route in routes.ts).
 */
export const meHierarchyRoutes: FastifyPluginAsyncTypebox<{ hierarchy: HierarchyService }> = async (
  app,
  { hierarchy },
) => {
  app.addSchema(UserTreeNodeSchema);
  app.get(
    '/identity/resources/users/v2/me/hierarchy',
    {
      config: guard.user(),
      schema: {
        tags: ['hierarchy'],
        summary:
          'My accounts with their hierarchy: the accounts I belong to (member) and the sub-accounts my memberships open, as trees',
        response: { 200: UserHierarchyResponse },
      },
    },
    async (req) => hierarchy.userHierarchy((req.auth as UserAuth).userId),
  );
};
