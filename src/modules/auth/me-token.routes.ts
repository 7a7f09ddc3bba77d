import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { LoginService } from './login.service.ts';

/** A fresh access token of the caller's session (no refresh token: the session's own is not rotated). */
const MeToken = Type.Object({
  accessToken: Type.String(),
  expiresIn: Type.Integer({ description: 'seconds' }),
  expires: Type.String({ format: 'date-time' }),
});

/** POST /identity/resources/users/v3/me/token: re-issue the caller's access token for its (live) session. */
export const meTokenRoutes: FastifyPluginAsyncTypebox<{ login: LoginService }> = async (app, { login }) => {
  app.post(
    '/identity/resources/users/v3/me/token',
    {
      config: guard.user(),
      schema: {
        tags: ['sign-in'],
        summary: 'A fresh access token for my session: current roles and permissions, same sid, amr and auth_time',
        response: { 201: MeToken },
      },
    },
    async (req, reply) => {
      const me = req.auth as UserAuth;
      // Machine tokens acting as a user and tokens without a session have no session to re-issue for.
      if (me.actor || !me.sessionId) throw new AppError('SESSION_REVOKED', 'The token belongs to no session');
      const token = await login.reissue(me.sessionId, {
        userId: me.userId,
        client: { ip: req.ip, userAgent: req.headers['user-agent'], cookie: req.headers.cookie },
      });
      return reply.status(201).send(token);
    },
  );
};
