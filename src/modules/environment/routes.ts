import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import {
  CreateCredentialBody,
  CreatedCredential,
  Credential,
  UpdateVendorSettings,
  VendorAuthBody,
  VendorAuthResponse,
  VendorConfig,
} from './schema.ts';
import type { EnvironmentService } from './service.ts';
import { loginBoxRoutes } from './login-box.routes.ts';
import { brandingRoutes } from './branding.ts';

export const environmentRoutes: FastifyPluginAsyncTypebox<{ environment: EnvironmentService }> = async (
  app,
  { environment },
) => {
  app.post(
    '/auth/vendor',
    {
      config: guard.public,
      schema: {
        tags: ['environment'],
        summary: 'Exchange environment credentials for a vendor token',
        body: VendorAuthBody,
        response: { 200: VendorAuthResponse },
      },
    },
    async (req) => environment.exchange(req.body.clientId, req.body.secret),
  );

  app.post(
    '/auth/vendor/credentials',
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'Create an environment API credential (secret shown once)',
        body: CreateCredentialBody,
        response: { 201: CreatedCredential },
      },
    },
    async (req, reply) => reply.status(201).send(await environment.createCredential(req.body ?? {})),
  );

  app.get(
    '/auth/vendor/credentials',
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'List environment API credentials',
        response: { 200: Type.Array(Credential) },
      },
    },
    async () => environment.listCredentials(),
  );

  app.delete(
    '/auth/vendor/credentials/:id',
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'Revoke an environment API credential',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 204: Type.Null({ description: 'no content' }) },
      },
    },
    async (req, reply) => {
      await environment.revokeCredential(req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/identity/resources/configurations/v1',
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'Identity configuration with the current public key (PEM)',
        response: { 200: VendorConfig },
      },
    },
    async () => environment.config(),
  );

  app.post(
    '/identity/resources/configurations/v1',
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'Update identity configuration',
        body: UpdateVendorSettings,
        response: { 201: VendorConfig },
      },
    },
    async (req, reply) => reply.status(201).send(await environment.updateSettings(req.body)),
  );

  await app.register(loginBoxRoutes, { environment });
  await app.register(brandingRoutes, { branding: environment.branding });
};
