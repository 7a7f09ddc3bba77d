import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { ApplicationsService } from './applications.ts';
import * as S from './applications-admin.schema.ts';

const tags = ['applications'];

/** Application client credentials and application clients (routes.md "Applications Settings"); environment tokens only. */
export const applicationCredentialsRoutes: FastifyPluginAsyncTypebox<{ applications: ApplicationsService }> = async (
  app,
  { applications },
) => {
  const creds = applications.credentials;
  const A = '/applications/resources/applications/v1/credentials';
  app.get(
    `${A}/:appId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Client credentials of an application (client id = application id; secrets masked, empty when never generated)',
        params: S.CredentialsParams,
        response: { 200: S.Credentials },
      },
    },
    async (req) => creds.credentials(req.params.appId),
  );
  app.post(
    `${A}/regenerate`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Generate a new client secret (answered whole this once; the old one stops matching)',
        body: S.RegenerateBody,
        response: { 201: S.Credentials },
      },
    },
    async (req, reply) => reply.status(201).send(await creds.regenerateClientSecret(req.body.appId)),
  );
  app.post(
    `${A}/shared/regenerate`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Generate a new shared secret (answered whole this once)',
        body: S.RegenerateBody,
        response: { 201: S.Credentials },
      },
    },
    async (req, reply) => reply.status(201).send(await creds.regenerateSharedSecret(req.body.appId)),
  );

  const C = '/applications/application-clients';
  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Create an application client (the application: body appId or the gatehouse-application-id header); the secret is answered this once',
        headers: S.ApplicationHeaders,
        body: S.CreateClient,
        response: { 201: S.Client },
      },
    },
    async (req, reply) => {
      const h = req.headers['gatehouse-application-id'] ?? req.headers['frontegg-application-id'];
      const header = (Array.isArray(h) ? h[0] : h)?.trim() || undefined;
      return reply.status(201).send(await creds.createClient(req.body, header));
    },
  );
  app.get(
    `${C}/app/:appId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Clients of an application (secrets masked)',
        params: S.CredentialsParams,
        response: { 200: Type.Array(S.Client) },
      },
    },
    async (req) => creds.clientsOf(req.params.appId),
  );
  app.get(
    `${C}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'An application client (secret masked)',
        params: S.ClientParams,
        response: { 200: S.Client },
      },
    },
    async (req) => creds.client(req.params.id),
  );
  app.patch(
    `${C}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update an application client (name, redirect URLs, metadata; fields left out keep their value)',
        params: S.ClientParams,
        body: S.UpdateClient,
        response: { 200: S.Client },
      },
    },
    async (req) => creds.updateClient(req.params.id, req.body),
  );
  app.delete(
    `${C}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete an application client',
        params: S.ClientParams,
        response: { 204: Type.Null({ description: 'no content' }) },
      },
    },
    async (req, reply) => {
      await creds.deleteClient(req.params.id);
      return reply.status(204).send(null);
    },
  );
};
