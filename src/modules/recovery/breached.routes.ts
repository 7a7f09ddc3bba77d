import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { ResetService } from './reset.service.ts';

export const BREACHED_RESET_MAX = 100;
const UserId = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'user id (uuid)' });

/** POST .../passwords/breached/reset/bulk (routes.md "Also called by existing browser clients", users). */
export const breachedResetRoutes: FastifyPluginAsyncTypebox<{ reset: ResetService }> = async (app, { reset }) => {
  app.post('/identity/resources/users/v1/passwords/breached/reset/bulk', {
    config: guard.vendor,
    schema: {
      tags: ['password reset'],
      summary: "Force a password reset after a breach: per user, voids reset links, disables the current password, emails a PwnedPassword reset link and ends the user's sessions; unknown ids are listed in notFound",
      body: Type.Object({ userIds: Type.Array(UserId, { minItems: 1, maxItems: BREACHED_RESET_MAX }) }),
      response: { 201: Type.Object({ requested: Type.Integer(), reset: Type.Array(Type.String()), notFound: Type.Array(Type.String()) }) },
    },
  }, async (req, reply) => reply.code(201).send(await reset.forceBreachedResets(req.body.userIds)));
};
