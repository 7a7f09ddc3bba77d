import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { pageEnvelope } from '../../http/paging.ts';
import type { DomainRestrictionsService, DomainScope } from './domain.service.ts';
import type { Caller, IpRestrictionsService } from './ip.service.ts';
import { ipBulkRoutes, type IpBulk } from './ip-bulk.ts';
import {
  CreateDomainRule,
  CreateIpRule,
  DomainConfig,
  DomainConfigBody,
  DomainListQuery,
  DomainRule,
  DomainRulePage,
  IdParams,
  IpConfig,
  IpConfigBody,
  IpListQuery,
  IpRule,
  IpRulePage,
  IpVerify,
  ReplaceDomains,
  TenantHeader,
} from './schema.ts';

const IP = '/identity/resources/configurations/v1/restrictions/ip';
const DOMAIN = '/identity/resources/configurations/restrictions/v1/email-domain';
/** Restrictions are security policies of the account: the same permissions govern them. */
const read = guard.any('fe.secure.read.securityPolicy');
const write = guard.any('fe.secure.write.securityPolicy');
const headers = TenantHeader;

const callerOf = (req: FastifyRequest): Caller => ({ kind: req.auth?.kind === 'user' ? 'user' : 'vendor', ip: req.ip });
/** Domain rules: a user token its own account; an environment token the header's account, else the environment. */
const domainScope = (req: FastifyRequest): DomainScope =>
  req.auth?.kind === 'user' ? req.auth.tenantId : (tenantHeader(req) ?? null);

export const restrictionsRoutes: FastifyPluginAsyncTypebox<{
  ip: IpRestrictionsService;
  ipBulk: IpBulk;
  domains: DomainRestrictionsService;
}> = async (app, { ip, ipBulk, domains }) => {
  const tags = ['IP restrictions'];
  app.get(
    `${IP}/config`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get the IP restriction configuration of the account (ALLOW, inactive until set)',
        headers,
        response: { 200: IpConfig },
      },
    },
    async (req) => ip.getConfig(accountOf(req)),
  );

  app.post(
    `${IP}/config`,
    {
      config: write,
      schema: {
        tags,
        summary:
          'Create or update the IP restriction configuration (which list is enforced, on or off); refused when it would lock the caller or every administrator out',
        headers,
        body: IpConfigBody,
        response: { 201: IpConfig },
      },
    },
    async (req, reply) => reply.status(201).send(await ip.setConfig(accountOf(req), req.body, callerOf(req))),
  );

  app.get(
    IP,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get the IP restrictions of the account, one page',
        headers,
        querystring: IpListQuery,
        response: { 200: IpRulePage },
      },
    },
    async (req) => {
      const r = await ip.list(accountOf(req), req.query);
      return pageEnvelope(r.items, { total: r.total, limit: r.limit, page: r.page, path: IP, query: req.query });
    },
  );

  app.post(
    IP,
    {
      config: write,
      schema: {
        tags,
        summary: 'Add an address or CIDR range (IPv4 or IPv6) to the allow or block list',
        headers,
        body: CreateIpRule,
        response: { 201: IpRule },
      },
    },
    async (req, reply) => reply.status(201).send(await ip.create(accountOf(req), req.body, callerOf(req))),
  );

  await app.register(ipBulkRoutes, { bulk: ipBulk, callerOf });
  app.post(
    `${IP}/verify`,
    {
      config: read,
      schema: {
        tags,
        summary: "Test whether a sign-in from the caller's address would be admitted now",
        headers,
        response: { 201: IpVerify },
      },
    },
    async (req, reply) => reply.status(201).send(await ip.verify(accountOf(req), req.ip)),
  );

  app.post(
    `${IP}/verify/allow`,
    {
      config: read,
      schema: {
        tags,
        summary: "Test whether the caller's address is on the active entries of the allow list",
        headers,
        response: { 201: IpVerify },
      },
    },
    async (req, reply) => reply.status(201).send(await ip.verify(accountOf(req), req.ip, true)),
  );

  app.delete(
    `${IP}/:id`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete an IP restriction; refused when it would lock the caller or every administrator out',
        headers,
        params: IdParams,
        response: { 200: IpRule },
      },
    },
    async (req) => ip.remove(accountOf(req), req.params.id, callerOf(req)),
  );

  const dtags = ['domain restrictions'];
  app.get(
    `${DOMAIN}/config`,
    {
      config: read,
      schema: {
        tags: dtags,
        summary:
          'Get the email-domain restriction configuration (environment, or the account of the header or user token)',
        headers,
        response: { 200: DomainConfig },
      },
    },
    async (req) => domains.getConfig(domainScope(req)),
  );

  app.post(
    `${DOMAIN}/config`,
    {
      config: write,
      schema: {
        tags: dtags,
        summary:
          'Turn email-domain restrictions on or off, choose the list enforced (type) and blocking of public email domains',
        headers,
        body: DomainConfigBody,
        response: { 201: DomainConfig },
      },
    },
    async (req, reply) => reply.status(201).send(await domains.setConfig(domainScope(req), req.body)),
  );

  app.get(
    DOMAIN,
    {
      config: read,
      schema: {
        tags: dtags,
        summary: 'Get the email-domain restrictions (both lists), one page',
        headers,
        querystring: DomainListQuery,
        response: { 200: DomainRulePage },
      },
    },
    async (req) => {
      const limit = req.query._limit ?? 200;
      const r = await domains.list(domainScope(req), limit, req.query._offset ?? 0);
      return pageEnvelope(r.items, { total: r.total, limit: r.limit, page: r.page, path: DOMAIN, query: req.query });
    },
  );

  app.post(
    DOMAIN,
    {
      config: write,
      schema: {
        tags: dtags,
        summary: 'Add a domain to the allow or block list',
        headers,
        body: CreateDomainRule,
        response: { 201: DomainRule },
      },
    },
    async (req, reply) => reply.status(201).send(await domains.create(domainScope(req), req.body)),
  );

  app.post(
    `${DOMAIN}/replace-bulk`,
    {
      config: write,
      schema: {
        tags: dtags,
        summary: 'Replace the whole allow or block list',
        headers,
        body: ReplaceDomains,
        response: { 201: Type.Array(DomainRule) },
      },
    },
    async (req, reply) => reply.status(201).send(await domains.replace(domainScope(req), req.body)),
  );

  app.delete(
    `${DOMAIN}/:id`,
    {
      config: write,
      schema: {
        tags: dtags,
        summary: 'Delete a domain restriction',
        headers,
        params: IdParams,
        response: { 200: DomainRule },
      },
    },
    async (req) => domains.remove(domainScope(req), req.params.id),
  );
};
