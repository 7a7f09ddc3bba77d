import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { guard } from './auth.ts';

/** The OpenAPI document is generated from the route schemas; served at /openapi.json, browsable at /docs. */
export async function installOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Gatehouse API',
        version: '1.0.0',
        description:
          'Identity, account management, SCIM provisioning and entitlements. Every route is also served under /frontegg.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { config: guard.public, schema: { hide: true } }, async () => app.swagger());
}
