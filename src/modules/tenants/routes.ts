import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import {
  Account,
  AccountPage,
  AliasParams,
  CreateAccount,
  ListQuery,
  MetadataBody,
  MetadataKeyParams,
  TenantParams,
  UpdateAccount,
} from './schema.ts';
import type { TenantsService } from './service.ts';

const tags = ['accounts'];
const V1 = '/tenants/resources/tenants/v1';
const V2 = '/tenants/resources/tenants/v2';

function deprecated(reply: { header: (k: string, v: string) => unknown }, tenantId: string) {
  reply.header('deprecation', 'true');
  reply.header('link', `<${V2}/${encodeURIComponent(tenantId)}>; rel="successor-version"`);
}

export const tenantsRoutes: FastifyPluginAsyncTypebox<{ tenants: TenantsService }> = async (app, { tenants }) => {
  app.post(
    V1,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create an account (reactivates a removed account with the same id)',
        body: CreateAccount,
        response: { 201: Account },
      },
    },
    async (req, reply) => reply.status(201).send(await tenants.create(req.body)),
  );

  app.get(
    V2,
    {
      config: guard.vendor,
      schema: { tags, summary: 'List accounts', querystring: ListQuery, response: { 200: AccountPage } },
    },
    async (req) => {
      const r = await tenants.list(req.query);
      return pageEnvelope(r.items, { total: r.total, limit: r.limit, page: r.page, path: V2, query: req.query });
    },
  );

  app.get(
    `${V2}/alias/:alias`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get an account by its alias (any case); 404 when no live account has it',
        params: AliasParams,
        response: { 200: Account },
      },
    },
    async (req) => tenants.getByAlias(req.params.alias),
  );

  app.get(
    `${V2}/:tenantId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get an account (an empty array when absent)',
        params: TenantParams,
        response: { 200: Type.Union([Account, Type.Array(Type.Never(), { maxItems: 0 })]) },
      },
    },
    async (req) => (await tenants.get(req.params.tenantId)) ?? [],
  );

  app.get(
    `${V1}/:tenantId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get an account (deprecated: use v2); an array of zero or one',
        deprecated: true,
        params: TenantParams,
        response: { 200: Type.Array(Account) },
      },
    },
    async (req, reply) => {
      deprecated(reply, req.params.tenantId);
      const account = await tenants.get(req.params.tenantId);
      return account ? [account] : [];
    },
  );

  for (const [path, isV1] of [
    [`${V2}/:tenantId`, false],
    [`${V1}/:tenantId`, true],
  ] as const) {
    app.put(
      path,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: isV1 ? 'Update an account (deprecated: use v2)' : 'Update an account',
          deprecated: isV1,
          params: TenantParams,
          body: UpdateAccount,
          response: { 200: Account },
        },
      },
      async (req, reply) => {
        if (isV1) deprecated(reply, req.params.tenantId);
        return tenants.update(req.params.tenantId, req.body);
      },
    );
  }

  app.delete(
    `${V1}/:tenantId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Remove an account and its users; its sub-accounts move to its parent',
        params: TenantParams,
        response: { 200: Account },
      },
    },
    async (req) => tenants.remove(req.params.tenantId),
  );

  app.delete(
    V1,
    {
      config: guard.user('fe.account-settings.delete.account'),
      schema: { tags, summary: "Remove the current user's account and its users", response: { 200: Account } },
    },
    async (req) => tenants.remove(req.auth!.kind === 'user' ? req.auth!.tenantId : ''),
  );

  app.post(
    `${V1}/:tenantId/metadata`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Add metadata (existing keys are overwritten)',
        params: TenantParams,
        body: MetadataBody,
        response: { 200: Account },
      },
    },
    async (req) => tenants.addMetadata(req.params.tenantId, req.body.metadata as Record<string, unknown>),
  );

  app.delete(
    `${V1}/:tenantId/metadata/:key`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Remove one metadata key', params: MetadataKeyParams, response: { 200: Account } },
    },
    async (req) => tenants.deleteMetadataKey(req.params.tenantId, req.params.key),
  );
};
