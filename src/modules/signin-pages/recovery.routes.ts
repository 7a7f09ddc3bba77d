import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { html } from '../../http/pages/html.ts';
import { csrfField, formGuard } from '../../http/pages/kit.ts';
import { field, notice } from '../../http/pages/layout.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import { checkCaptcha, confirmForm, failureText, messagePage, type SigninPagesDeps, statusOf } from './deps.ts';
import { Email, Form, LinkQuery, Password, Token, UserId } from './schema.ts';
import { newPassword, returnField } from './views.ts';

const hide = true;
const signInLink = (locale: string, returnTo: string) => {
  const href = `/account/login?${new URLSearchParams({ returnTo })}`;
  return html`<p class="links"><a href="${href}">${t(locale, 'back.signin')}</a></p>`;
};

/** Forgot password, the emailed reset link, and the emailed email-verification link (the recovery services). */
export const recoveryPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  const guard = formGuard(app);

  const forgotPage = (reply: FastifyReply, s: { email?: string; error?: string; info?: string }, status = 200) => {
    const L = reply.request.locale;
    const intro = s.info ? notice('info', s.info) : html`<p>${t(L, 'forgot.intro')}</p>`;
    const email = field({
      name: 'email',
      label: t(L, 'signin.email'),
      type: 'email',
      value: s.email,
      autocomplete: 'username',
      required: true,
      autofocus: true,
    });
    return reply.status(status).page({
      title: 'forgot.title',
      body: html`${s.error ? notice('error', s.error) : ''}${intro}
<form method="post" action="/account/forgot-password">${csrfField(reply)}
${email}
<p><button type="submit">${t(L, 'forgot.submit')}</button></p></form>${signInLink(L, '/account/me')}`,
    });
  };

  app.get('/account/forgot-password', { config: { auth: 'public' }, schema: { hide } }, async (_req, reply) =>
    forgotPage(reply, {}),
  );

  app.post(
    '/account/forgot-password',
    { config: { auth: 'public' }, schema: { hide, body: Form({ email: Email }) }, preHandler: guard },
    async (req, reply) => {
      const { email } = req.body;
      try {
        await checkCaptcha(deps, req, { email });
        // The same answer whether or not the email names a user (the service equalises the timing too).
        await deps.reset.requestByEmail({ email, identifierType: 'email' }, req.ip);
        return forgotPage(reply, { email, info: t(req.locale, 'forgot.sent') });
      } catch (err) {
        return forgotPage(reply, { email, error: failureText(req.locale, err, 'forgot.sent') }, statusOf(err));
      }
    },
  );

  const resetPage = (reply: FastifyReply, s: { userId: string; token: string; returnTo: string; error?: string }) => {
    const L = reply.request.locale;
    const password = newPassword(L, 'reset.password');
    return html`${s.error ? notice('error', s.error) : ''}
<form method="post" action="/account/reset-password">${csrfField(reply)}${returnField(s.returnTo)}
<input type="hidden" name="userId" value="${s.userId}"><input type="hidden" name="token" value="${s.token}">
${password}
<p><button type="submit">${t(L, 'reset.submit')}</button></p></form>`;
  };

  app.get(
    '/account/reset-password',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { userId, token } = req.query;
      const returnTo = safeReturnTo(req.query.returnTo);
      if (!userId || !token) return messagePage(reply, 'reset.title', 'error', t(req.locale, 'link.missing'), 400);
      try {
        await deps.reset.validate({ userId, token });
      } catch (err) {
        const text = failureText(req.locale, err, 'reset.invalid');
        return messagePage(reply, 'reset.title', 'error', text, statusOf(err));
      }
      return reply.page({ title: 'reset.title', body: resetPage(reply, { userId, token, returnTo }) });
    },
  );

  app.post(
    '/account/reset-password',
    {
      config: { auth: 'public' },
      schema: { hide, body: Form({ userId: UserId, token: Token, password: Password }) },
      preHandler: guard,
    },
    async (req, reply) => {
      const { userId, token, password } = req.body;
      const returnTo = safeReturnTo(req.body.returnTo);
      try {
        await deps.reset.reset({ userId, token, password });
      } catch (err) {
        const error = failureText(req.locale, err, 'reset.invalid');
        return reply
          .status(statusOf(err))
          .page({ title: 'reset.title', body: resetPage(reply, { userId, token, returnTo, error }) });
      }
      return reply.page({
        title: 'reset.title',
        body: html`${notice('info', t(req.locale, 'reset.done'))}${signInLink(req.locale, returnTo)}`,
      });
    },
  );

  app.get(
    '/account/verify-email',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { userId, token } = req.query;
      if (!userId || !token) return messagePage(reply, 'verify.title', 'error', t(req.locale, 'link.missing'), 400);
      return reply.page({
        title: 'verify.title',
        body: confirmForm(reply, '/account/verify-email', { userId, token }, t(req.locale, 'verify.submit')),
      });
    },
  );

  app.post(
    '/account/verify-email',
    { config: { auth: 'public' }, schema: { hide, body: Form({ userId: UserId, token: Token }) }, preHandler: guard },
    async (req, reply) => {
      try {
        await deps.verification.verifyLink({ userId: req.body.userId, token: req.body.token });
      } catch (err) {
        const text = failureText(req.locale, err, 'verify.invalid');
        return messagePage(reply, 'verify.title', 'error', text, statusOf(err));
      }
      return messagePage(reply, 'verify.title', 'info', t(req.locale, 'verify.done'));
    },
  );
};
