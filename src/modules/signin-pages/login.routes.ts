import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { readCookie } from '../../http/cookies.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t, type TextKey } from '../../http/pages/text.ts';
import { REFRESH_COOKIE } from '../auth/index.ts';
import { checkCaptcha, clientOf, failureText, finishSignIn, type SigninPagesDeps, statusOf } from './deps.ts';
import { methodsOf } from './methods.ts';
import { Email, Form, LoginQuery, Password } from './schema.ts';
import { type LoginState, loginBody } from './views.ts';

const hide = true;

/** GET/POST /account/login (email and password), and the redirects of SSO by email domain and social providers. */
export const loginRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  const guard = formGuard(app);

  async function render(reply: FastifyReply, s: LoginState, status = 200) {
    const extra = deps.loginExtra;
    const body = loginBody(reply, await methodsOf(deps), s, extra?.render(reply, s.returnTo));
    return reply.status(status).page({ title: 'signin.title', body, scripts: extra?.scripts });
  }
  /** Re-renders the sign-in page with a refusal in our words (same words for unknown and known identifiers). */
  const refused = (
    req: FastifyRequest,
    reply: FastifyReply,
    err: unknown,
    s: Omit<LoginState, 'error'>,
    fallback: TextKey = 'signin.failed',
  ) => render(reply, { ...s, error: failureText(req.locale, err, fallback) }, statusOf(err));

  app.get(
    '/account/login',
    { config: { auth: 'public' }, schema: { hide, querystring: LoginQuery } },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.query.returnTo);
      if (req.query.prompt !== 'login') {
        const session = await deps.login.browserSession(readCookie(req.headers.cookie, REFRESH_COOKIE), clientOf(req));
        if (session) return reply.redirect(returnTo, 303);
      }
      return render(reply, { email: req.query.login_hint, returnTo });
    },
  );

  app.post(
    '/account/login',
    {
      config: { auth: 'public' },
      schema: { hide, body: Form({ email: Email, password: Password }) },
      preHandler: guard,
    },
    async (req, reply) => {
      const { email, password } = req.body;
      const returnTo = safeReturnTo(req.body.returnTo);
      try {
        await checkCaptcha(deps, req, { email });
        const answer = await deps.login.login({ email, password }, clientOf(req));
        const done = await finishSignIn(deps, reply, answer, returnTo);
        if (done) return done;
        return render(reply, { email, returnTo, error: t(req.locale, 'signin.failed') }, 401);
      } catch (err) {
        return refused(req, reply, err, { email, returnTo });
      }
    },
  );

  // SSO by email domain: the SSO service finds the account's identity provider and checks the redirect allow-list.
  app.post(
    '/account/login/sso',
    { config: { auth: 'public' }, schema: { hide, body: Form({ email: Email }) }, preHandler: guard },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      try {
        const { address } = await deps.sso.prelogin({ email: req.body.email });
        return reply.redirect(address, 303);
      } catch (err) {
        return refused(req, reply, err, { email: req.body.email, returnTo }, 'sso.none');
      }
    },
  );

  // A social provider's button: its authorize redirect (state, PKCE and the redirect allow-list are the service's).
  app.post(
    '/account/login/social/:provider',
    {
      config: { auth: 'public' },
      schema: { hide, params: Type.Object({ provider: Type.String({ maxLength: 64 }) }), body: Form({}) },
      preHandler: guard,
    },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      try {
        const { address } = await deps.social.prelogin(req.params.provider, {});
        return reply.redirect(address, 303);
      } catch (err) {
        return refused(req, reply, err, { returnTo }, 'social.unavailable');
      }
    },
  );
};
