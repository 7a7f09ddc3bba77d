import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { Account } from '../tenants/index.ts';
import {
  AccountParams,
  AssignBody,
  CreateSubAccount,
  HierarchyEntry,
  HierarchySettingsBody,
  ManagementBody,
  TreeNodeRef,
  TreeNodeSchema,
  UnassignBody,
  UpdateSubAccount,
} from './schema.ts';
import type { Actor, HierarchyService } from './service.ts';
import { meHierarchyRoutes } from './me.routes.ts';
import { treeV2Routes } from './tree-v2.routes.ts';

const tags = ['hierarchy'];
const HIERARCHY = '/tenants/resources/hierarchy/v1';
const SUB = '/tenants/resources/sub-tenants/v1';
const READ = 'fe.account-hierarchy.read.subaccount';
const WRITE = 'fe.account-hierarchy.write.subaccount';

/** The caller as the service sees it (the guard has run, so `req.auth` is set). */
function actorOf(req: FastifyRequest): Actor {
  const auth = req.auth!;
  return auth.kind === 'user' ? { kind: 'user', tenantId: auth.tenantId } : { kind: 'vendor' };
}

export const hierarchyRoutes: FastifyPluginAsyncTypebox<{ hierarchy: HierarchyService }> = async (
  app,
  { hierarchy },
) => {
  app.post(
    HIERARCHY,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Assign an existing account as a sub-account of a parent (moves it if it has a parent)',
        body: AssignBody,
        response: { 201: Account },
      },
    },
    async (req, reply) => reply.status(201).send(await hierarchy.assign(req.body)),
  );

  app.delete(
    HIERARCHY,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Detach a sub-account from its parent (body: childTenantId, or tenantId)',
        body: UnassignBody,
        response: { 200: Account },
      },
    },
    async (req) => hierarchy.unassign(req.body),
  );

  app.get(
    HIERARCHY,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'All sub-accounts of the account (level 1 = direct children)',
        response: { 200: Type.Array(HierarchyEntry) },
      },
    },
    async (req) => hierarchy.subAccounts(accountOf(req)),
  );

  app.get(
    `${HIERARCHY}/parents`,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'All parent accounts of the account, nearest first',
        response: { 200: Type.Array(HierarchyEntry) },
      },
    },
    async (req) => hierarchy.parents(accountOf(req), actorOf(req)),
  );

  app.get(
    `${HIERARCHY}/parents/:tenantId`,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'All parent accounts of an account (a user: their account or one of its sub-accounts)',
        params: AccountParams,
        response: { 200: Type.Array(HierarchyEntry) },
      },
    },
    async (req) => hierarchy.parents(req.params.tenantId, actorOf(req)),
  );

  // The tree's self-referencing schema is added in a scope of its own: a Fastify scope that adds a shared schema
  // rebuilds its validator from the default (coercing) Ajv, which must not reach the routes that take a body.
  await app.register(async (scope) => {
    scope.addSchema(TreeNodeSchema);
    scope.get(
      `${HIERARCHY}/tree`,
      {
        config: guard.any(READ),
        schema: { tags, summary: 'The account and its sub-accounts as a tree', response: { 200: TreeNodeRef } },
      },
      async (req) => hierarchy.tree(accountOf(req)),
    );
  });

  await app.register(meHierarchyRoutes, { hierarchy });
  await app.register(treeV2Routes, { hierarchy });

  app.post(
    SUB,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Create a sub-account (reactivates a removed account with the same id)',
        body: CreateSubAccount,
        response: { 201: Account },
      },
    },
    async (req, reply) => reply.status(201).send(await hierarchy.createSubAccount(actorOf(req), req.body)),
  );

  app.delete(
    `${SUB}/:tenantId`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Remove a sub-account and its users; its sub-accounts move to its parent',
        params: AccountParams,
        response: { 200: Account },
      },
    },
    async (req) => hierarchy.removeSubAccount(actorOf(req), req.params.tenantId),
  );

  app.patch(
    `${SUB}/:tenantId`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Update a sub-account',
        params: AccountParams,
        body: UpdateSubAccount,
        response: { 200: Account },
      },
    },
    async (req) => hierarchy.updateSubAccount(actorOf(req), req.params.tenantId, req.body),
  );

  app.put(
    `${SUB}/:tenantId/management`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Give or take multi-seller management (isReseller) of a sub-account',
        params: AccountParams,
        body: ManagementBody,
        response: { 200: Account },
      },
    },
    async (req) => hierarchy.setManagement(actorOf(req), req.params.tenantId, req.body.isReseller),
  );

  app.put(
    `${SUB}/:tenantId/hierarchy-settings`,
    {
      config: guard.any(WRITE),
      schema: {
        tags,
        summary: 'Set how users reach sub-accounts (subAccountAccessType)',
        params: AccountParams,
        body: HierarchySettingsBody,
        response: { 200: Account },
      },
    },
    async (req) => hierarchy.setHierarchySettings(actorOf(req), req.params.tenantId, req.body.subAccountAccessType),
  );
};
