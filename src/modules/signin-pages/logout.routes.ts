import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { html } from '../../http/pages/html.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import { readCookie } from '../../http/cookies.ts';
import { REFRESH_COOKIE, refreshCookie } from '../auth/index.ts';
import { clientOf, confirmForm, MFA_COOKIE, type SigninPagesDeps } from './deps.ts';
import { Form } from './schema.ts';
import { Type } from 'typebox';

const hide = true;

/** Sign-out of the browser: a confirmation page, and the form post (CSRF) that ends the session. */
export const logoutPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  app.get(
    '/account/logout',
    {
      config: { auth: 'public' },
      schema: { hide, querystring: Type.Object({ returnTo: Type.Optional(Type.String({ maxLength: 2000 })) }) },
    },
    async (req, reply) => {
      const session = await deps.login.browserSession(readCookie(req.headers.cookie, REFRESH_COOKIE), clientOf(req));
      const who = session?.user.email
        ? html`<p>${t(req.locale, 'signin.signedInAs', { email: session.user.email })}</p>`
        : '';
      const returnTo = safeReturnTo(req.query.returnTo, '/account/login');
      return reply.page({
        title: 'logout.title',
        body: confirmForm(
          reply,
          '/account/logout',
          { returnTo },
          t(req.locale, 'logout.confirm'),
          html`${who}<p>${t(req.locale, 'logout.intro')}</p>`,
        ),
      });
    },
  );

  // A POST with the CSRF token: a link or an image on another site cannot sign the user out.
  app.post(
    '/account/logout',
    { config: { auth: 'public' }, schema: { hide, body: Form({}) }, preHandler: formGuard(app) },
    async (req, reply) => {
      await deps.login.logout({ refreshToken: readCookie(req.headers.cookie, REFRESH_COOKIE) });
      const settings = await deps.environment.cachedSettings();
      const secure = deps.secureCookies ? '; Secure' : '';
      reply.header('set-cookie', refreshCookie(null, settings, deps.secureCookies));
      reply.header('set-cookie', `${MFA_COOKIE}=; Path=/account; HttpOnly; SameSite=Lax; Max-Age=0${secure}`);
      return reply.redirect(safeReturnTo(req.body.returnTo, '/account/login'), 303);
    },
  );
};
