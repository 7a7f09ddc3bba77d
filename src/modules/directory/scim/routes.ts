import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { guard } from '../../../http/auth.ts';
import { AppError, scimErrorBody, type ErrorCode } from '../../../http/errors.ts';
import type { ConnectionRow } from '../connections.store.ts';
import type { DirectoryService } from '../service.ts';
import { searchBody, type ListQuery } from './list.ts';
import { resourceTypeDocs, schemaDocs, serviceProviderConfig, URN } from './schemas.ts';
import {
  NoContent,
  ResourceType,
  ResourceTypeList,
  SchemaDoc,
  SchemaList,
  ScimGroup,
  ScimGroupList,
  ScimUser,
  ScimUserList,
  scimJson,
  ServiceProviderConfig,
} from './openapi.ts';
import { etagOf, project } from './resource.ts';
import type { ScimCall } from './users.service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    scim?: ScimCall;
  }
}

export const SCIM_PREFIX = '/directory/resources/scim/v2.0';
const SCIM_TYPE: Partial<Record<ErrorCode, string>> = {
  SCIM_INVALID_FILTER: 'invalidFilter',
  SCIM_INVALID_PATH: 'invalidPath',
  SCIM_INVALID_SYNTAX: 'invalidSyntax',
  SCIM_INVALID_VALUE: 'invalidValue',
  SCIM_UNIQUENESS: 'uniqueness',
  SCIM_NO_TARGET: 'noTarget',
  SCIM_MUTABILITY: 'mutability',
  VALIDATION: 'invalidValue',
  INVALID_JSON: 'invalidSyntax',
  CONFLICT: 'uniqueness',
};

/** RFC 7644 section 3.12: `schemas`, `status`, `scimType` when one applies, `detail`; nothing else. */
const scimError = (err: AppError) => scimErrorBody(err.status, err.message, SCIM_TYPE[err.code]);

/** The resource and endpoint names of the service; RFC 7644 clients (Entra's among them) send them in any case. */
const ENDPOINTS = ['Users', 'Groups', 'ServiceProviderConfig', 'ResourceTypes', 'Schemas', 'Bulk'];
const BY_LOWER = new Map(ENDPOINTS.map((n) => [n.toLowerCase(), n]));
const ENDPOINT_IN_URL = new RegExp(`^(${SCIM_PREFIX.replaceAll('.', '\\.')}/[^/?]+/)([^/?]+)`);

/** Rewrites `/…/scim/v2.0/{configId}/users` to `…/Users` (a URL rewrite, so routes keep one spelling). */
export function canonicalScimUrl(url: string): string {
  const m = ENDPOINT_IN_URL.exec(url);
  const name = m ? BY_LOWER.get(m[2].toLowerCase()) : undefined;
  return m && name && name !== m[2] ? m[1] + name + url.slice(m[0].length) : url;
}

function toAppError(err: FastifyError | AppError, bodyLimit: number): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) return new AppError('SCIM_INVALID_VALUE', fe.message);
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('BODY_TOO_LARGE', `Request body is larger than the SCIM limit of ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/scim+json or application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('SCIM_INVALID_SYNTAX', 'Request body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('SCIM_INVALID_SYNTAX', 'Request body is not valid JSON');
  }
  if (fe.code === '23505') return new AppError('SCIM_UNIQUENESS', 'The request conflicts with an existing resource');
  if (typeof fe.code === 'string' && /^22[0-9A-Z]{3}$/.test(fe.code))
    return new AppError('SCIM_INVALID_VALUE', 'A value in the request cannot be stored');
  if (fe.code === '54000') return new AppError('SCIM_INVALID_VALUE', 'A value in the request is too long to store');
  if (err instanceof SyntaxError) return new AppError('SCIM_INVALID_SYNTAX', 'Request body is not valid JSON');
  if (fe.statusCode === 413) return new AppError('BODY_TOO_LARGE');
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500)
    return new AppError('SCIM_INVALID_SYNTAX', fe.message);
  return new AppError('INTERNAL');
}

const bearer = (req: FastifyRequest): string | undefined => {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
};

const ifMatch = (req: FastifyRequest) =>
  typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : undefined;

/**
 * The SCIM 2.0 service of each connection, registered under SCIM_PREFIX. An encapsulated plugin: its routes are
 * `guard.public` for the platform guard and authenticate the connection's own bearer token here; it parses
 * application/scim+json, answers in it, and owns a SCIM-shaped error and not-found handler.
 */
export async function scimRoutes(
  app: FastifyInstance,
  { directory, publicUrl }: { directory: DirectoryService; publicUrl: string },
) {
  const { bodyLimit, maxResults } = directory.scim;
  // JSON and SCIM JSON alike; an empty body (a DELETE that still names a content type, as directories send) is no body.
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  const lenient: typeof parseJson = (req, body, done) =>
    (body as string).trim() === '' ? done(null, undefined) : parseJson(req, body, done);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'application/scim+json'], { parseAs: 'string', bodyLimit }, lenient);

  app.setErrorHandler((err: FastifyError | AppError, req, reply) => {
    const e = toAppError(err, bodyLimit);
    if (e.code === 'INTERNAL') req.log.error({ err }, 'unhandled error');
    return reply.status(e.status).type('application/scim+json; charset=utf-8').send(scimError(e));
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new AppError('SCIM_RESOURCE_NOT_FOUND', `No SCIM endpoint ${req.method} ${req.url.split('?')[0]}`);
    return reply.status(404).type('application/scim+json; charset=utf-8').send(scimError(e));
  });

  app.addHook('onRequest', async (req) => {
    const configId = (req.params as { configId?: string }).configId;
    if (!configId) return;
    const call = await directory.authenticate(configId, bearer(req), (id) => `${publicUrl}${SCIM_PREFIX}/${id}`);
    req.scim = call;
    // Audit: the authenticated connection acts, in its account.
    req.auditActor = { type: 'scim', id: call.connection.id };
    req.auditTenantId = (call.connection as { tenant_id?: string }).tenant_id;
  });
  // lastSync is written before the answer leaves (after the call's own transaction committed), so a client that has
  // the answer reads a lastSync that counts the call; any update that began after the call did counts it.
  app.addHook('onSend', async (req, reply, payload) => {
    const ct = reply.getHeader('content-type');
    if (typeof ct === 'string' && ct.startsWith('application/json'))
      reply.header('content-type', 'application/scim+json; charset=utf-8');
    const c = req.scim?.connection;
    const isProvisioning = /\/(Users|Groups)(\/|$|\?)/.test(req.url);
    if (c && isProvisioning && reply.statusCode < 400)
      await directory
        .touch(c as ConnectionRow, req.method !== 'GET', Date.now() - reply.elapsedTime)
        .catch((err) => req.log.warn({ err }, 'lastSync update failed'));
    return payload;
  });

  // Answers are declared under application/scim+json only (openapi.ts): documented, never serialised by Fastify.
  const opts = (summary: string, response: Record<number, unknown> = {}) => ({
    config: guard.public,
    bodyLimit,
    schema: { tags: ['scim'], summary: `${summary} (SCIM connection bearer token)`, response },
  });
  const call = (req: FastifyRequest) => req.scim!;
  const send = (
    reply: FastifyReply,
    status: number,
    v: { resource: Record<string, unknown>; version: number },
    location?: boolean,
  ) => {
    reply.header('etag', etagOf(v.version));
    if (location) reply.header('location', (v.resource.meta as { location: string }).location);
    return reply.status(status).send(v.resource);
  };
  const notModified = (req: FastifyRequest, version: number) => {
    const h = req.headers['if-none-match'];
    return typeof h === 'string' && h.split(',').some((t) => t.trim() === etagOf(version) || t.trim() === '*');
  };

  app.get(
    '/:configId/ServiceProviderConfig',
    opts('Service provider configuration', {
      200: scimJson('the service provider configuration (RFC 7643 section 5)', ServiceProviderConfig),
    }),
    async (req) => serviceProviderConfig(call(req).base, maxResults, bodyLimit),
  );
  app.get(
    '/:configId/ResourceTypes',
    opts('Resource types', { 200: scimJson('ListResponse of the resource types', ResourceTypeList) }),
    async (req) => {
      const docs = resourceTypeDocs(call(req).base);
      return {
        schemas: [URN.list],
        totalResults: docs.length,
        startIndex: 1,
        itemsPerPage: docs.length,
        Resources: docs,
      };
    },
  );
  app.get(
    '/:configId/ResourceTypes/:name',
    opts('One resource type', { 200: scimJson('the resource type', ResourceType) }),
    async (req) => {
      const doc = resourceTypeDocs(call(req).base).find((d) => d.id === (req.params as { name: string }).name);
      if (!doc) throw new AppError('SCIM_RESOURCE_NOT_FOUND', 'No such resource type');
      return doc;
    },
  );
  app.get(
    '/:configId/Schemas',
    opts('Schemas', { 200: scimJson('ListResponse of the schemas', SchemaList) }),
    async (req) => {
      const docs = schemaDocs(call(req).base);
      return {
        schemas: [URN.list],
        totalResults: docs.length,
        startIndex: 1,
        itemsPerPage: docs.length,
        Resources: docs,
      };
    },
  );
  app.get('/:configId/Schemas/:id', opts('One schema', { 200: scimJson('the schema', SchemaDoc) }), async (req) => {
    const doc = schemaDocs(call(req).base).find((d) => d.id === (req.params as { id: string }).id);
    if (!doc) throw new AppError('SCIM_RESOURCE_NOT_FOUND', 'No such schema');
    return doc;
  });

  for (const [kind, svc] of [
    ['Users', directory.scimUsers],
    ['Groups', directory.scimGroups],
  ] as const) {
    const one = `/:configId/${kind}/:id`;
    const item = kind === 'Users' ? ScimUser : ScimGroup;
    const list = { 200: scimJson(`ListResponse of ${kind}`, kind === 'Users' ? ScimUserList : ScimGroupList) };
    const name = kind.slice(0, -1);
    app.get(
      `/:configId/${kind}`,
      opts(`List ${kind} (filter, sortBy, startIndex, count, attributes)`, list),
      async (req) => svc.list(call(req), req.query as ListQuery),
    );
    app.post(`/:configId/${kind}/.search`, opts(`Search ${kind} (POST /.search)`, list), async (req, reply) =>
      reply.status(200).send(await svc.list(call(req), searchBody(req.body))),
    );
    app.post(
      `/:configId/${kind}`,
      opts(`Create a ${name}`, { 201: scimJson(`the created ${name} (Location and ETag headers)`, item) }),
      async (req, reply) => send(reply, 201, await svc.create(call(req), req.body), true),
    );
    app.get(
      one,
      opts(`Get a ${name}`, {
        200: scimJson(`the ${name} (ETag header)`, item),
        304: NoContent('not modified: If-None-Match named the current version'),
      }),
      async (req, reply) => {
        const q = req.query as ListQuery;
        const v =
          kind === 'Groups'
            ? await directory.scimGroups.get(call(req), (req.params as { id: string }).id, q)
            : await directory.scimUsers.get(call(req), (req.params as { id: string }).id);
        if (notModified(req, v.version)) return reply.status(304).send();
        return send(reply, 200, {
          resource: project(kind === 'Users' ? 'User' : 'Group', v.resource, q.attributes, q.excludedAttributes),
          version: v.version,
        });
      },
    );
    app.put(
      one,
      opts(`Replace a ${name}`, { 200: scimJson(`the replaced ${name} (ETag header)`, item) }),
      async (req, reply) =>
        send(reply, 200, await svc.replace(call(req), (req.params as { id: string }).id, req.body, ifMatch(req))),
    );
    app.patch(
      one,
      opts(`Patch a ${name}`, { 200: scimJson(`the patched ${name} (ETag header)`, item) }),
      async (req, reply) => {
        const id = (req.params as { id: string }).id;
        const v =
          kind === 'Groups'
            ? await directory.scimGroups.patch(call(req), id, req.body, ifMatch(req), req.query as ListQuery)
            : await directory.scimUsers.patch(call(req), id, req.body, ifMatch(req));
        return send(reply, 200, v);
      },
    );
    app.delete(one, opts(`Delete a ${name}`, { 204: NoContent(`${name} deleted`) }), async (req, reply) => {
      await svc.remove(call(req), (req.params as { id: string }).id, ifMatch(req));
      return reply.status(204).send();
    });
  }
  app.post('/:configId/Bulk', opts('Bulk (not supported)'), async () => {
    throw new AppError('SCIM_NOT_IMPLEMENTED', 'Bulk operations are not supported (see ServiceProviderConfig)');
  });
}
