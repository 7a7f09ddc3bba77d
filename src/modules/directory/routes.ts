import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import {
  Connection,
  ConnectionParams,
  CreateConnection,
  CreatedConnection,
  DeleteConnection,
  GroupMappings,
  ListConnectionsQuery,
  NoContent,
  UpdateConnection,
} from './schema.ts';
import type { DirectoryService } from './service.ts';
import { directoryUsersCountRoutes } from './users-count.ts';
import { grantorOf } from '../roles/index.ts';

const tags = ['directory'];
const C = '/directory/resources/v1/configurations/scim2';

/**
 * SCIM connection management: environment tokens with the tenant header, or a user token holding the
 * `fe.secure.*.scim` permission, acting on the user's own account.
 */
export const directoryRoutes: FastifyPluginAsyncTypebox<{ directory: DirectoryService }> = async (
  app,
  { directory },
) => {
  await app.register(directoryUsersCountRoutes, { directory });
  app.post(
    C,
    {
      config: guard.any('fe.secure.write.scim'),
      schema: {
        tags,
        summary: 'Create a SCIM connection (the token is returned only here)',
        body: CreateConnection,
        response: { 201: CreatedConnection },
      },
    },
    async (req, reply) => reply.status(201).send(await directory.create(accountOf(req), req.body)),
  );

  app.get(
    C,
    {
      config: guard.any('fe.secure.read.scim'),
      schema: {
        tags,
        summary:
          'List SCIM connections (a user sees their own account; an environment token all, or those of tenantId / the tenant header)',
        querystring: ListConnectionsQuery,
        response: { 200: Type.Array(Connection) },
      },
    },
    async (req) => {
      const own = req.auth?.kind === 'user' ? req.auth.tenantId : undefined;
      const tenantId = own ?? req.query.tenantId ?? tenantHeader(req);
      if (own && req.query.tenantId && req.query.tenantId !== own) return [];
      return directory.list({
        tenantId,
        source: req.query.source,
        connectionName: req.query.connectionName,
        id: req.query.id,
      });
    },
  );

  app.get(
    `${C}/:id`,
    {
      config: guard.any('fe.secure.read.scim'),
      schema: { tags, summary: 'Get a SCIM connection', params: ConnectionParams, response: { 200: Connection } },
    },
    async (req) => directory.get(accountOf(req), req.params.id),
  );

  app.patch(
    `${C}/:id`,
    {
      config: guard.any('fe.secure.write.scim'),
      schema: {
        tags,
        summary: 'Update a SCIM connection (switching syncToUserManagement on puts its users into user management)',
        params: ConnectionParams,
        body: UpdateConnection,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      await directory.update(accountOf(req), req.params.id, req.body);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    `${C}/:id`,
    {
      config: guard.any('fe.secure.delete.scim'),
      schema: {
        tags,
        summary: 'Delete a SCIM connection and its directory (deleteAll: also remove the users it provisioned)',
        params: ConnectionParams,
        body: DeleteConnection,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      await directory.remove(accountOf(req), req.params.id, req.body?.deleteAll === true);
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${C}/:id/token`,
    {
      config: guard.any('fe.secure.write.scim'),
      schema: {
        tags,
        summary: 'Rotate the token of a SCIM connection (the old one stops working at once)',
        params: ConnectionParams,
        response: { 200: CreatedConnection },
      },
    },
    async (req) => directory.rotateToken(accountOf(req), req.params.id),
  );

  app.get(
    `${C}/:id/group-mappings`,
    {
      config: guard.any('fe.secure.read.scim'),
      schema: {
        tags,
        summary: 'Get the SCIM group-to-role mapping of a connection',
        params: ConnectionParams,
        response: { 200: GroupMappings },
      },
    },
    async (req) => directory.groupMappings(accountOf(req), req.params.id),
  );

  app.put(
    `${C}/:id/group-mappings`,
    {
      config: guard.any('fe.secure.write.scim'),
      schema: {
        tags,
        summary: 'Set the SCIM group-to-role mapping (members of a group get its roles in the account)',
        params: ConnectionParams,
        body: GroupMappings,
        response: { 200: GroupMappings },
      },
    },
    async (req) => directory.setGroupMappings(accountOf(req), req.params.id, req.body, grantorOf(req.auth!)),
  );
};
