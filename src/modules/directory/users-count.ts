import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { ConnectionParams } from './schema.ts';
import type { DirectoryService } from './service.ts';

/**
 * How many users a SCIM connection's directory holds: every user the identity provider provisioned through it and
 * that is still there (active or not), whether or not it is synced to user management. Client libraries call this
 * the "temp" directory: the users held by the connection itself. Counted by the SCIM list the provider uses
 * (`count=0` answers `totalResults` only), over the connection the caller's account owns (404 otherwise).
 */
export async function countDirectoryUsers(
  directory: DirectoryService,
  tenantId: string,
  connectionId: string,
): Promise<{ count: number }> {
  const c = await directory.get(tenantId, connectionId);
  const connection = {
    tenant_id: c.tenantId,
    id: c.id,
    connection_name: c.connectionName,
    source: c.source,
    sync_to_user_management: c.syncToUserManagement,
    metadata: c.metadata,
    token_hash: '',
    group_roles: [],
    last_sync: null,
    created_at: new Date(c.createdAt),
    updated_at: new Date(c.createdAt),
  };
  const page = await directory.scimUsers.list({ connection, base: '', tokenHash: '' }, { count: 0 });
  return { count: page.totalResults };
}

/** GET /directory/resources/scim/temp/{id}/Users/count → 200 {count}. */
export const directoryUsersCountRoutes: FastifyPluginAsyncTypebox<{ directory: DirectoryService }> = async (
  app,
  { directory },
) => {
  app.get(
    '/directory/resources/scim/temp/:id/Users/count',
    {
      config: guard.any('fe.secure.read.scim'),
      schema: {
        tags: ['directory'],
        summary: "How many users the SCIM connection's directory holds (provisioned and not deleted, synced or not)",
        params: ConnectionParams,
        response: { 200: Type.Object({ count: Type.Integer({ minimum: 0 }) }) },
      },
    },
    async (req) => countDirectoryUsers(directory, accountOf(req), req.params.id),
  );
};
