import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { ResetService } from './reset.service.ts';

export const BREACHED_RESET_MAX = 100;
const UserId = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'user id (uuid)',
});

/** POST .../passwords/breached/reset/bulk (routes.md "Also called by existing browser clients", users). */
export const breachedResetRoutes: FastifyPluginAsyncTypebox<{ reset: ResetService }> = async (app, { reset }) => {
  app.post(
    '/identity/resources/users/v1/passwords/breached/reset/bulk',
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags: ['password reset'],
        summary:
          'Force a password reset after a breach: per user, voids reset links, disables the current password, ' +
          "emails a PwnedPassword reset link and ends the user's sessions; unknown ids are listed in notFound. A user " +
          'token resets members of its own account only (others are not found) and leaves users another account ' +
          'shares (listed in shared)',
        body: Type.Optional(
          Type.Object({
            userIds: Type.Optional(Type.Array(UserId, { minItems: 1, maxItems: BREACHED_RESET_MAX })),
          }),
        ),
        response: {
          201: Type.Object({
            requested: Type.Integer(),
            reset: Type.Array(Type.String()),
            notFound: Type.Array(Type.String()),
            shared: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (req, reply) => {
      // The browser SDK sends no body ("the users whose password was breached"): Gatehouse keeps no such record.
      const userIds = req.body?.userIds;
      if (!userIds) {
        const message =
          'body.userIds is required: name the users (1 to 100) whose passwords must be reset; ' +
          'Gatehouse keeps no record of breached passwords';
        throw new AppError('VALIDATION', message, { fields: ['userIds'] });
      }
      const accountId = req.auth?.kind === 'user' ? req.auth.tenantId : undefined;
      return reply.code(201).send(await reset.forceBreachedResets(userIds, accountId));
    },
  );
};
