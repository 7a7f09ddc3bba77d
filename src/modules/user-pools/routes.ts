import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import {
  AssignBody,
  CreatedSource,
  createBody,
  Empty,
  SourceParams,
  SourceUsersPage,
  SourceUsersQuery,
  updateBody,
  UserSource,
  type SourceBody,
} from './schema.ts';
import type { UserPoolsService } from './service.ts';

const tags = ['user pools'];
const S = '/identity/resources/user-sources/v1';
/** Create and update routes of each external type: path segment → stored type. */
const EXTERNAL: [string, string][] = [
  ['external/auth0', 'auth0'],
  ['external/cognito', 'cognito'],
  ['external/firebase', 'firebase'],
  ['external/custom-code', 'custom-code'],
  ['federation', 'federation'],
];

export const userPoolsRoutes: FastifyPluginAsyncTypebox<{ userPools: UserPoolsService }> = async (
  app,
  { userPools },
) => {
  app.get(
    S,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get the user sources of the environment (the built-in pool first by index)',
        response: { 200: Type.Array(UserSource) },
      },
    },
    async () => userPools.list(),
  );

  app.get(
    `${S}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get a user source (secrets answered as a placeholder)',
        params: SourceParams,
        response: { 200: UserSource },
      },
    },
    async (req) => userPools.get(req.params.id),
  );

  app.delete(
    `${S}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete an external user source (its applications return to the built-in pool)',
        params: SourceParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await userPools.remove(req.params.id);
      return {};
    },
  );

  for (const [segment, type] of EXTERNAL) {
    app.post(
      `${S}/${segment}`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: `Create a ${type} user source`,
          body: createBody(type),
          response: { 201: CreatedSource },
        },
      },
      async (req, reply) => reply.status(201).send(await userPools.create(type, req.body as SourceBody)),
    );

    app.put(
      `${S}/${segment}/:id`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: `Update a ${type} user source (a configuration is replaced whole)`,
          params: SourceParams,
          body: updateBody(type),
          response: { 200: UserSource },
        },
      },
      async (req) => userPools.update(type, req.params.id, req.body as SourceBody),
    );
  }

  app.post(
    `${S}/assign`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Applications take their users from this source (moved from their previous one)',
        body: AssignBody,
        response: { 201: UserSource },
      },
    },
    async (req, reply) => reply.status(201).send(await userPools.assign(req.body.userSourceId, req.body.appIds)),
  );

  app.post(
    `${S}/unassign`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Applications leave this source and return to the built-in pool',
        body: AssignBody,
        response: { 201: UserSource },
      },
    },
    async (req, reply) => reply.status(201).send(await userPools.unassign(req.body.userSourceId, req.body.appIds)),
  );

  app.get(
    `${S}/:id/users`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get the users of a source, one page (built-in: every user; external: users of its applications)',
        params: SourceParams,
        querystring: SourceUsersQuery,
        response: { 200: SourceUsersPage },
      },
    },
    async (req) => {
      const r = await userPools.users(req.params.id, req.query._limit ?? 50, req.query._offset ?? 0);
      return pageEnvelope(r.items, {
        total: r.total,
        limit: r.limit,
        page: r.page,
        path: `${S}/${req.params.id}/users`,
        query: req.query,
      });
    },
  );
};
