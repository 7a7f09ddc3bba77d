import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import {
  BulkGetBody,
  CreateGroup,
  Empty,
  Group,
  GroupIdParams,
  GroupParams,
  GroupsConfig,
  GroupsConfigBody,
  GroupsPage,
  GroupsPageQuery,
  GroupsResponse,
  RelationsQuery,
  RoleIdsBody,
  UpdateGroup,
  UserIdsBody,
} from './schema.ts';
import { grantorOf } from '../roles/index.ts';
import type { GroupsService } from './service.ts';
import { userGroupsRoutes } from './user-groups.routes.ts';

const tags = ['user groups'];
const G = '/identity/resources/groups';
/** Groups are part of managing an account's users: the users permissions govern them. */
const read = guard.any('fe.secure.read.users');
const write = guard.any('fe.secure.write.users');
const headers = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      description:
        'the account (alias: frontegg-tenant-id); required with an environment token; a user token acts on its own account',
    }),
  ),
});

export const groupsRoutes: FastifyPluginAsyncTypebox<{ groups: GroupsService }> = async (app, { groups }) => {
  await app.register(userGroupsRoutes, { groups });

  // Read by the groups screen (whether groups and their roles are on); only the environment changes it.
  app.get(
    `${G}/v1/config`,
    {
      config: read,
      schema: { tags, summary: 'Get the groups configuration of the environment', response: { 200: GroupsConfig } },
    },
    async () => groups.config(),
  );

  app.post(
    `${G}/v1/config`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Create or update the groups configuration (enabled: groups may be changed; rolesEnabled: groups give roles)',
        body: GroupsConfigBody,
        response: { 201: GroupsConfig },
      },
    },
    async (req, reply) => reply.status(201).send(await groups.setConfig(req.body)),
  );

  app.get(
    `${G}/v1`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get all groups of the account (relations only as _groupsRelations asks)',
        headers,
        querystring: RelationsQuery,
        response: { 200: GroupsResponse },
      },
    },
    async (req) => groups.list(accountOf(req), req.query._groupsRelations),
  );

  app.get(
    `${G}/v2`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get the groups of the account, one page (wire.md section 5)',
        headers,
        querystring: GroupsPageQuery,
        response: { 200: GroupsPage },
      },
    },
    async (req) => {
      const r = await groups.page(accountOf(req), req.query);
      return pageEnvelope(r.items, { total: r.total, limit: r.limit, page: r.page, path: `${G}/v2`, query: req.query });
    },
  );

  app.post(
    `${G}/v1/bulkGet`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get groups by ids (unknown ids are skipped)',
        headers,
        querystring: RelationsQuery,
        body: BulkGetBody,
        response: { 201: GroupsResponse },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await groups.bulkGet(accountOf(req), req.body.groupsIds, req.query._groupsRelations)),
  );

  app.post(
    `${G}/v1`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a group (name unique in the account)',
        headers,
        body: CreateGroup,
        response: { 201: Group },
      },
    },
    async (req, reply) => reply.status(201).send(await groups.create(accountOf(req), req.body)),
  );

  app.get(
    `${G}/v1/:id`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get a group (roles and users unless _groupsRelations narrows them)',
        headers,
        params: GroupParams,
        querystring: RelationsQuery,
        response: { 200: Group },
      },
    },
    async (req) => groups.get(accountOf(req), req.params.id, req.query._groupsRelations),
  );

  app.patch(
    `${G}/v1/:id`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Update a group',
        headers,
        params: GroupParams,
        body: UpdateGroup,
        response: { 200: Group },
      },
    },
    async (req) => groups.update(accountOf(req), req.params.id, req.body),
  );

  app.delete(
    `${G}/v1/:id`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a group (its members keep their own roles)',
        headers,
        params: GroupParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await groups.remove(accountOf(req), req.params.id, grantorOf(req.auth!));
      return {};
    },
  );

  app.post(
    `${G}/v1/:groupId/roles`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Add roles to a group: environment roles or roles of the account',
        headers,
        params: GroupIdParams,
        body: RoleIdsBody,
        response: { 201: Group },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await groups.addRoles(accountOf(req), req.params.groupId, req.body.roleIds, grantorOf(req.auth!))),
  );

  app.delete(
    `${G}/v1/:groupId/roles`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove roles from a group',
        headers,
        params: GroupIdParams,
        body: RoleIdsBody,
        response: { 200: Group },
      },
    },
    async (req) => groups.removeRoles(accountOf(req), req.params.groupId, req.body.roleIds, grantorOf(req.auth!)),
  );

  app.post(
    `${G}/v1/:groupId/users`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Add users of the account to a group',
        headers,
        params: GroupIdParams,
        body: UserIdsBody,
        response: { 201: Group },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await groups.addUsers(accountOf(req), req.params.groupId, req.body.userIds, grantorOf(req.auth!))),
  );

  app.delete(
    `${G}/v1/:groupId/users`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove users from a group',
        headers,
        params: GroupIdParams,
        body: UserIdsBody,
        response: { 200: Group },
      },
    },
    async (req) => groups.removeUsers(accountOf(req), req.params.groupId, req.body.userIds, grantorOf(req.auth!)),
  );
};
