import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { html } from '../../http/pages/html.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { notice } from '../../http/pages/layout.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import { type BrowserSession, refreshCookie } from '../auth/index.ts';
import { actorOf } from './me.page.ts';
import { type AccountPagesDeps, browserSession, Csrf, clientOf, loginUrl, refusal } from './shared.ts';
import { codeField, form, hidden } from './views.ts';

const config = { auth: 'public' as const };
const ReturnTo = Type.Optional(Type.String({ maxLength: 2000 }));

/**
 * A second factor for a signed-in session (the OpenID provider's `acr_values` asking for multi-factor): a code of the
 * user's authenticator app through the API's step-up, so the session's tokens carry the multi-factor `acr` from now.
 */
export const stepUpPageRoutes: FastifyPluginAsyncTypebox<AccountPagesDeps> = async (app, deps) => {
  const preHandler = formGuard(app);

  async function page(reply: FastifyReply, returnTo: string, s: BrowserSession, error?: string) {
    const l = reply.request.locale;
    const hasApp = (await deps.mfa.devices.list(actorOf(s))).authenticators.length > 0;
    const body = hasApp
      ? html`${error ? notice('error', error) : ''}<p>${t(l, 'stepup.intro')}</p>${form(
          reply,
          '/account/step-up',
          [hidden('returnTo', returnTo), codeField(l)],
          t(l, 'mfa.verify'),
        )}`
      : html`${notice('info', t(l, 'stepup.none'))}<p class="links"><a href="/account/me#mfa">${t(l, 'me.title')}</a></p>`;
    return reply.page({ title: 'stepup.title', body });
  }

  app.get<{ Querystring: { returnTo?: string } }>(
    '/account/step-up',
    { config, schema: { hide: true, querystring: Type.Object({ returnTo: ReturnTo }) } },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.query.returnTo);
      const s = await browserSession(deps, req);
      if (!s) return reply.redirect(loginUrl(`/account/step-up?returnTo=${encodeURIComponent(returnTo)}`), 303);
      return page(reply, returnTo, s);
    },
  );

  app.post(
    '/account/step-up',
    {
      config,
      preHandler,
      schema: {
        hide: true,
        body: Type.Object({ ...Csrf, returnTo: ReturnTo, code: Type.String({ minLength: 1, maxLength: 32 }) }),
      },
    },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      const s = await browserSession(deps, req);
      if (!s) return reply.redirect(loginUrl(`/account/step-up?returnTo=${encodeURIComponent(returnTo)}`), 303);
      try {
        const client = clientOf(req);
        const { accessToken } = await deps.login.reissue(s.sessionId, { userId: s.user.id, client });
        const auth = await deps.authenticate(accessToken);
        if (auth.kind !== 'user') throw new AppError('SESSION_REVOKED');
        const r = await deps.login.stepUp(auth as UserAuth, { code: req.body.code.trim() }, client);
        const settings = await deps.environment.cachedSettings();
        reply.header('set-cookie', refreshCookie(r.refreshToken, settings, deps.secureCookies));
      } catch (err) {
        return page(reply, returnTo, s, refusal(reply, err));
      }
      return reply.redirect(returnTo, 303);
    },
  );
};
