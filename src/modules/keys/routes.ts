import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { KeysService } from './service.ts';

const Key = Type.Object({
  kid: Type.String(),
  alg: Type.String(),
  status: Type.String(),
  createdAt: Type.String(),
  retiredAt: Type.Union([Type.String(), Type.Null()]),
  verifyUntil: Type.Union([Type.String(), Type.Null()]),
});

export const keysRoutes: FastifyPluginAsyncTypebox<{ keys: KeysService }> = async (app, { keys }) => {
  app.get(
    '/.well-known/jwks.json',
    {
      config: guard.public,
      schema: {
        tags: ['keys'],
        summary: 'Public signing keys (JWKS)',
        response: { 200: Type.Object({ keys: Type.Array(Type.Any()) }) },
      },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return keys.jwks();
    },
  );

  app.get(
    '/identity/resources/configurations/v1/signing-keys',
    {
      config: guard.vendor,
      schema: {
        tags: ['keys'],
        summary: 'List signing keys (no private material)',
        response: { 200: Type.Array(Key) },
      },
    },
    async () => keys.list(),
  );

  app.post(
    '/identity/resources/configurations/v1/signing-keys/rotate',
    {
      config: guard.vendor,
      schema: {
        tags: ['keys'],
        summary: 'Rotate the signing key; the old key keeps verifying until its grace period ends',
        body: Type.Optional(
          Type.Object({
            algorithm: Type.Optional(Type.Union([Type.Literal('RS256'), Type.Literal('ES256'), Type.Literal('EdDSA')])),
          }),
        ),
        response: { 201: Type.Object({ kid: Type.String() }) },
      },
    },
    async (req, reply) => reply.status(201).send(await keys.rotate(req.body?.algorithm)),
  );
};
