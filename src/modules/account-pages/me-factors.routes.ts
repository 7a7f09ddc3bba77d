import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { notice } from '../../http/pages/layout.ts';
import { t } from '../../http/pages/text.ts';
import { refreshCookie } from '../auth/index.ts';
import { actorOf, refusedMe, sessionOr303 } from './me.page.ts';
import { type AccountPagesDeps, clientOf, Csrf, isRecent, refusal } from './shared.ts';
import { codeField, enrolment, form, hidden, isOtpauth, recoveryCodes } from './views.ts';

const Kind = Type.Union([Type.Literal('authenticator'), Type.Literal('sms')]);
const DeviceId = Type.String({ format: 'uuid' });
const back = (l: string) => html`<p class="links"><a href="/account/me#mfa">${t(l, 'me.back')}</a></p>`;

/**
 * The second factors of /account/me: add an authenticator app, remove a factor with the proof the API asks (a current
 * code of the app; a code texted to the phone), and the password confirmation that makes the sign-in recent again
 * (the API's step-up), since these are identity changes (RECENT_AUTH_MAX_AGE, as the self-service MFA routes).
 */
export const meFactorsRoutes: FastifyPluginAsyncTypebox<AccountPagesDeps> = async (app, deps) => {
  const config = { auth: 'public' as const };
  const preHandler = formGuard(app);
  const { mfa } = deps;

  /** The page that asks for the proof of a removal: the app's current code, or the code texted to the phone. */
  function removePage(
    reply: FastifyReply,
    o: { kind: 'authenticator' | 'sms'; deviceId: string; otcToken?: string; phone?: string; error?: string },
  ) {
    const l = reply.request.locale;
    const intro = o.kind === 'sms' ? t(l, 'me.mfa.remove.sent', { phone: o.phone ?? '' }) : t(l, 'me.mfa.remove.app');
    const fields: SafeHtml[] = [
      hidden('kind', o.kind),
      hidden('deviceId', o.deviceId),
      hidden('otcToken', o.otcToken),
      codeField(l),
    ];
    const body = html`${o.error ? notice('error', o.error) : ''}<p>${intro}</p>${form(reply, '/account/me/mfa/remove/verify', fields, t(l, 'me.mfa.remove'))}${back(l)}`;
    return reply.page({ title: 'me.mfa', body });
  }

  app.post(
    '/account/me/mfa/add',
    { config, preHandler, schema: { hide: true, body: Type.Object(Csrf) } },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        if (!isRecent(deps, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        const { uri } = await mfa.devices.enrollAuthenticator(actorOf(s));
        const body = html`${await enrolment(reply, { action: '/account/me/mfa/add/verify', uri })}${back(req.locale)}`;
        return reply.page({ title: 'mfa.enrol.title', body });
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'mfa', err);
      }
    },
  );

  app.post(
    '/account/me/mfa/add/verify',
    {
      config,
      preHandler,
      schema: {
        hide: true,
        body: Type.Object({ ...Csrf, code: Type.String({ maxLength: 64 }), uri: Type.String({ maxLength: 1024 }) }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        if (!isRecent(deps, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        const r = await mfa.devices.verifyAuthenticator(actorOf(s), req.body.code);
        const next = '/account/me?done=mfa-added';
        return reply.page({ title: 'mfa.codes.title', body: recoveryCodes(req.locale, r.recoveryCodes, next) });
      } catch (err) {
        const expired = err instanceof AppError && err.code === 'MFA_NO_PENDING_ENROLLMENT';
        if (
          !isOtpauth(req.body.uri) ||
          expired ||
          !(err instanceof AppError) ||
          err.code === 'RECENT_AUTHENTICATION_REQUIRED'
        )
          return refusedMe(deps, req, reply, s, 'mfa', err);
        // A wrong first code: the same QR code and secret again.
        const error = notice('error', refusal(reply, err));
        const body = await enrolment(reply, { action: '/account/me/mfa/add/verify', uri: req.body.uri, error });
        return reply.page({ title: 'mfa.enrol.title', body: html`${body}${back(req.locale)}` });
      }
    },
  );

  app.post(
    '/account/me/mfa/remove',
    {
      config,
      preHandler,
      schema: { hide: true, body: Type.Object({ ...Csrf, kind: Kind, deviceId: DeviceId }) },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      const { kind, deviceId } = req.body;
      try {
        if (!isRecent(deps, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        if (kind === 'authenticator') return removePage(reply, { kind, deviceId });
        const r = await mfa.codes.disableSms(actorOf(s), deviceId);
        const phone = 'phoneNumber' in r ? r.phoneNumber : undefined;
        return removePage(reply, { kind, deviceId, otcToken: r.otcToken, phone });
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'mfa', err);
      }
    },
  );

  app.post(
    '/account/me/mfa/remove/verify',
    {
      config,
      preHandler,
      schema: {
        hide: true,
        body: Type.Object({
          ...Csrf,
          kind: Kind,
          deviceId: DeviceId,
          code: Type.String({ maxLength: 64 }),
          otcToken: Type.Optional(Type.String({ maxLength: 512 })),
        }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      const { kind, deviceId, code, otcToken } = req.body;
      try {
        if (!isRecent(deps, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        if (kind === 'authenticator') await mfa.devices.disableAuthenticator(actorOf(s), code, deviceId);
        else await mfa.codes.disableSmsVerify(actorOf(s), deviceId, { otcToken: otcToken ?? '', code });
      } catch (err) {
        const retry =
          err instanceof AppError && ['MFA_INVALID_CODE', 'MFA_CODE_REUSED', 'RATE_LIMITED'].includes(err.code);
        if (!retry) return refusedMe(deps, req, reply, s, 'mfa', err);
        const error = refusal(reply, err);
        const phone = (await mfa.devices.list(actorOf(s))).phones.find((p) => p.id === deviceId)?.phoneNumber;
        return removePage(reply, { kind, deviceId, otcToken, phone, error });
      }
      return reply.redirect('/account/me?done=mfa-removed', 303);
    },
  );

  // POST /identity/resources/auth/v1/user/step-up/generate {password}: the session's authentication time becomes
  // now (its refresh token rotated, so gh_refresh is set again). A wrong password counts as at sign-in.
  app.post(
    '/account/me/confirm',
    {
      config,
      preHandler,
      schema: {
        hide: true,
        body: Type.Object({ ...Csrf, confirmPassword: Type.String({ minLength: 1, maxLength: 1024 }) }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(deps, req, reply);
      if (!s) return reply;
      try {
        const client = clientOf(req);
        const { accessToken } = await deps.login.reissue(s.sessionId, { userId: s.user.id, client });
        const auth = await deps.authenticate(accessToken);
        if (auth.kind !== 'user') throw new AppError('SESSION_REVOKED');
        const r = await deps.login.stepUp(auth as UserAuth, { password: req.body.confirmPassword }, client);
        const settings = await deps.environment.cachedSettings();
        reply.header('set-cookie', refreshCookie(r.refreshToken, settings, deps.secureCookies));
      } catch (err) {
        return refusedMe(deps, req, reply, s, 'mfa', err);
      }
      return reply.redirect('/account/me?done=confirmed#mfa', 303);
    },
  );
};
