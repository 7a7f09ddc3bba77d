import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { formGuard } from '../../http/pages/kit.ts';
import { refusedMe, renderMe, sessionOr303 } from './me.page.ts';
import { DONE, type Done } from './me.views.ts';
import { type AccountPagesDeps, Csrf } from './shared.ts';

const done = (what: Done) => `/account/me?done=${what}`;

/**
 * /account/me: the signed-in user's profile, password and sessions (second factors: me-factors.routes.ts). Each form
 * calls the service the self-service API route calls, with the same checks; success answers 303 back to the page.
 */
export const meRoutes: FastifyPluginAsyncTypebox<AccountPagesDeps> = async (app, deps) => {
  const config = { auth: 'public' as const };
  const preHandler = formGuard(app);

  app.get(
    '/account/me',
    {
      config,
      schema: {
        hide: true,
        querystring: Type.Object({ done: Type.Optional(Type.Union(DONE.map((d) => Type.Literal(d)))) }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      return renderMe(deps, req, reply, s, { done: req.query.done as Done | undefined });
    },
  );

  // PUT /identity/resources/users/v2/me: the name (the phone number is a sign-in identifier with its own checks).
  app.post(
    '/account/me/profile',
    {
      config,
      preHandler,
      schema: { hide: true, body: Type.Object({ ...Csrf, name: Type.String({ maxLength: 255 }) }) },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        await deps.users.updateProfile(s.user.id, s.tenantId, { name: req.body.name.trim() });
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'profile', err, { name: req.body.name });
      }
      return reply.redirect(done('profile'), 303);
    },
  );

  // POST /identity/resources/users/v1/passwords/change: policy, history, failure count and limits of the API; the
  // user's other sessions end, this one stays.
  app.post(
    '/account/me/password',
    {
      config,
      preHandler,
      schema: {
        hide: true,
        body: Type.Object({
          ...Csrf,
          password: Type.String({ minLength: 1, maxLength: 1024 }),
          newPassword: Type.String({ minLength: 1, maxLength: 1024 }),
        }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        await deps.users.changePassword(s.user.id, req.body.password, req.body.newPassword, {
          ip: req.ip,
          keepSessionId: s.sessionId,
        });
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'password', err);
      }
      return reply.redirect(done('password'), 303);
    },
  );

  // DELETE /identity/resources/users/sessions/v1/me/{id}: one of the user's sessions.
  app.post(
    '/account/me/sessions/revoke',
    {
      config,
      preHandler,
      schema: { hide: true, body: Type.Object({ ...Csrf, sessionId: Type.String({ maxLength: 64 }) }) },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        await deps.sessions.revokeMine(s.user.id, req.body.sessionId);
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'sessions', err);
      }
      return reply.redirect(done('session'), 303);
    },
  );

  // DELETE /identity/resources/users/sessions/v1/me/all: every session but this one.
  app.post(
    '/account/me/sessions/others',
    { config, preHandler, schema: { hide: true, body: Type.Object(Csrf) } },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      await deps.sessions.revokeAll(s.user.id, s.sessionId);
      return reply.redirect(done('sessions'), 303);
    },
  );
};
