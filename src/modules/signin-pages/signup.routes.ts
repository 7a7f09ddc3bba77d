import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { html } from '../../http/pages/html.ts';
import { csrfField, formGuard } from '../../http/pages/kit.ts';
import { field, notice } from '../../http/pages/layout.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import {
  checkCaptcha,
  clientOf,
  confirmForm,
  failureText,
  finishSignIn,
  messagePage,
  type SigninPagesDeps,
  statusOf,
} from './deps.ts';
import { methodsOf } from './methods.ts';
import { Email, Form, LinkQuery, Password, Token, UserId } from './schema.ts';
import { newPassword } from './views.ts';

const hide = true;
const Name = Type.String({ minLength: 1, maxLength: 255 });

/** Self-service sign-up (when the environment allows it) and the emailed activation link (the signup service). */
export const signupPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  const guard = formGuard(app);

  type SignupState = { name?: string; email?: string; companyName?: string; error?: string };
  const signupPage = (reply: FastifyReply, s: SignupState, status = 200) => {
    const L = reply.request.locale;
    const fields = [
      field({
        name: 'name',
        label: t(L, 'signup.name'),
        value: s.name,
        autocomplete: 'name',
        required: true,
        autofocus: true,
      }),
      field({
        name: 'email',
        label: t(L, 'signin.email'),
        type: 'email',
        value: s.email,
        autocomplete: 'email',
        required: true,
      }),
      field({ name: 'companyName', label: t(L, 'signup.company'), value: s.companyName, autocomplete: 'organization' }),
      newPassword(L, 'signin.password', false),
    ];
    return reply.status(status).page({
      title: 'signup.title',
      body: html`${s.error ? notice('error', s.error) : ''}
<form method="post" action="/account/signup">${csrfField(reply)}
${fields}
<p><button type="submit">${t(L, 'signup.submit')}</button></p></form>
<p class="links"><a href="/account/login">${t(L, 'signup.haveAccount')}</a></p>`,
    });
  };
  const closed = (reply: FastifyReply) =>
    messagePage(reply, 'signup.title', 'error', t(reply.request.locale, 'signup.closed'), 404);

  app.get('/account/signup', { config: { auth: 'public' }, schema: { hide } }, async (_req, reply) =>
    (await methodsOf(deps)).allowSignups ? signupPage(reply, {}) : closed(reply),
  );

  app.post(
    '/account/signup',
    {
      config: { auth: 'public' },
      schema: {
        hide,
        body: Form({
          name: Name,
          email: Email,
          password: Password,
          companyName: Type.Optional(Type.String({ maxLength: 255 })),
        }),
      },
      preHandler: guard,
    },
    async (req, reply) => {
      if (!(await methodsOf(deps)).allowSignups) return closed(reply);
      const { name, email, password } = req.body;
      const companyName = req.body.companyName?.trim() || undefined;
      try {
        await checkCaptcha(deps, req, { email });
        await deps.signup.signUp({ name, email, password, companyName }, clientOf(req));
      } catch (err) {
        const error = failureText(req.locale, err, 'signup.failed');
        return signupPage(reply, { name, email, companyName, error }, statusOf(err));
      }
      return messagePage(reply, 'signup.title', 'info', t(req.locale, 'signup.sent'));
    },
  );

  type ActivateState = { userId: string; token: string; returnTo: string; setPassword: boolean; error?: string };
  const activateBody = (reply: FastifyReply, s: ActivateState) => {
    const L = reply.request.locale;
    const password = s.setPassword
      ? html`<input type="hidden" name="setPassword" value="1">${newPassword(L, 'activate.password')}`
      : '';
    const hidden = { userId: s.userId, token: s.token, returnTo: s.returnTo };
    const form = confirmForm(reply, '/account/activate', hidden, t(L, 'activate.submit'), password);
    return html`${s.error ? notice('error', s.error) : ''}${form}`;
  };

  app.get(
    '/account/activate',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { userId, token } = req.query;
      if (!userId || !token) return messagePage(reply, 'activate.title', 'error', t(req.locale, 'link.missing'), 400);
      let setPassword: boolean;
      try {
        setPassword = (await deps.signup.strategy(userId, token)).shouldSetPassword;
      } catch (err) {
        const text = failureText(req.locale, err, 'activate.invalid');
        return messagePage(reply, 'activate.title', 'error', text, statusOf(err));
      }
      const returnTo = safeReturnTo(req.query.returnTo);
      return reply.page({
        title: 'activate.title',
        body: activateBody(reply, { userId, token, returnTo, setPassword }),
      });
    },
  );

  app.post(
    '/account/activate',
    {
      config: { auth: 'public' },
      schema: {
        hide,
        body: Form({
          userId: UserId,
          token: Token,
          password: Type.Optional(Password),
          setPassword: Type.Optional(Type.String({ maxLength: 1 })),
        }),
      },
      preHandler: guard,
    },
    async (req, reply) => {
      const { userId, token, password } = req.body;
      const returnTo = safeReturnTo(req.body.returnTo);
      const again = (error: string, status: number) =>
        reply.status(status).page({
          title: 'activate.title',
          body: activateBody(reply, { userId, token, returnTo, setPassword: req.body.setPassword === '1', error }),
        });
      try {
        await checkCaptcha(deps, req, { userId });
        const answer = await deps.signup.activate({ userId, token, password }, clientOf(req));
        const done = await finishSignIn(deps, reply, answer, returnTo);
        return done ?? again(t(req.locale, 'activate.invalid'), 400);
      } catch (err) {
        return again(failureText(req.locale, err, 'activate.invalid'), statusOf(err));
      }
    },
  );
};
