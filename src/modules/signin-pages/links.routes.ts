import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { formGuard } from '../../http/pages/kit.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import {
  clientOf,
  confirmForm,
  failureText,
  finishSignIn,
  messagePage,
  type SigninPagesDeps,
  statusOf,
} from './deps.ts';
import { Form, LinkQuery, Token, UserId } from './schema.ts';

const hide = true;

/** The unlock link of the lockout notice and the invitation link: a confirmation button, then the service. */
export const linksPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  const guard = formGuard(app);

  app.get(
    '/account/unlock',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { token } = req.query;
      if (!token) return messagePage(reply, 'unlock.title', 'error', t(req.locale, 'link.missing'), 400);
      return reply.page({
        title: 'unlock.title',
        body: confirmForm(reply, '/account/unlock', { token }, t(req.locale, 'unlock.submit')),
      });
    },
  );

  app.post(
    '/account/unlock',
    { config: { auth: 'public' }, schema: { hide, body: Form({ token: Token }) }, preHandler: guard },
    async (req, reply) => {
      try {
        await deps.unlock(req.body.token);
      } catch (err) {
        const text = failureText(req.locale, err, 'unlock.invalid');
        return messagePage(reply, 'unlock.title', 'error', text, statusOf(err));
      }
      return messagePage(reply, 'unlock.title', 'info', t(req.locale, 'unlock.done'));
    },
  );

  app.get(
    '/account/invitation/accept',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { userId, token } = req.query;
      if (!userId || !token) return messagePage(reply, 'invite.title', 'error', t(req.locale, 'link.missing'), 400);
      const hidden = { userId, token, returnTo: safeReturnTo(req.query.returnTo) };
      return reply.page({
        title: 'invite.title',
        body: confirmForm(reply, '/account/invitation/accept', hidden, t(req.locale, 'invite.submit')),
      });
    },
  );

  app.post(
    '/account/invitation/accept',
    { config: { auth: 'public' }, schema: { hide, body: Form({ userId: UserId, token: Token }) }, preHandler: guard },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      const failed = (text: string, status: number) => messagePage(reply, 'invite.title', 'error', text, status);
      try {
        const answer = await deps.invitations.accept({ userId: req.body.userId, token: req.body.token }, clientOf(req));
        const done = await finishSignIn(deps, reply, answer, returnTo);
        return done ?? failed(t(req.locale, 'invite.invalid'), 400);
      } catch (err) {
        return failed(failureText(req.locale, err, 'invite.invalid'), statusOf(err));
      }
    },
  );
};
