import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../http/errors.ts';
import { html } from '../../http/pages/html.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { notice } from '../../http/pages/layout.ts';
import { t } from '../../http/pages/text.ts';
import { type Challenge, defaultMethod, expiredPage, type Method, type MfaView, mfaPage } from './mfa.views.ts';
import {
  type AccountPagesDeps,
  clearMfaCookie,
  clientOf,
  Csrf,
  localReturnTo,
  loginUrl,
  mfaTokenOf,
  type RememberCookie,
  refusal,
  signedInCookies,
} from './shared.ts';
import { enrolment, isOtpauth, recoveryCodes } from './views.ts';

const Query = Type.Object({
  returnTo: Type.Optional(Type.String({ maxLength: 2048 })),
  method: Type.Optional(Type.Union(['totp', 'sms', 'email', 'recovery', 'passkey'].map((m) => Type.Literal(m)))),
  deviceId: Type.Optional(Type.String({ format: 'uuid' })),
});
/** The method a link asked for, when the user holds it (else the page shows the default one). */
function offered(c: Challenge, method: Method | undefined, deviceId: string | undefined, passkeys: boolean) {
  const d = c.devices;
  if (method === 'passkey' && passkeys && d.webauthn.some((k) => k.id === deviceId)) return { method, deviceId };
  if (method === 'totp' && d.authenticators.length > 0) return { method };
  if (method === 'sms' && d.phones.some((p) => p.id === deviceId)) return { method, deviceId };
  if (method === 'email' && d.emails.length > 0) return { method };
  if (method === 'recovery' && c.userEmail) return { method };
  return undefined;
}

const Action = Type.Union(
  ['totp', 'send-sms', 'sms', 'send-email', 'email', 'recover', 'enroll', 'passkey'].map((a) => Type.Literal(a)),
);
const Body = Type.Object({
  ...Csrf,
  action: Action,
  code: Type.Optional(Type.String({ maxLength: 64 })),
  deviceId: Type.Optional(Type.String({ format: 'uuid' })),
  otcToken: Type.Optional(Type.String({ maxLength: 512 })),
  uri: Type.Optional(Type.String({ maxLength: 1024 })),
  rememberDevice: Type.Optional(Type.String({ maxLength: 8 })),
  /** The passkey step: the assertion (WebAuthn JSON) and the token of its options. */
  response: Type.Optional(Type.String({ maxLength: 65536 })),
  webauthnToken: Type.Optional(Type.String({ maxLength: 512 })),
});
type BodyT = {
  action: string;
  code?: string;
  deviceId?: string;
  otcToken?: string;
  uri?: string;
  rememberDevice?: string;
  response?: string;
  webauthnToken?: string;
};

/**
 * /account/mfa: the second step of a browser sign-in (cookie gh_mfa = the mfaToken the sign-in page received). The
 * same MFA services as the API's /user/mfa routes verify, count failures and rate-limit; a finished sign-in sets
 * gh_refresh (and remember-device when asked), drops gh_mfa and goes on to returnTo.
 */
export const mfaPageRoutes: FastifyPluginAsyncTypebox<AccountPagesDeps> = async (app, deps) => {
  const { mfa } = deps;
  const config = { auth: 'public' as const };
  const passkeys = Boolean(deps.passkeyFactor);

  /** The MFA page of a view (with the passkey form and its script when the user holds a passkey). */
  function show(reply: FastifyReply, v: Omit<MfaView, 'passkeyForm'>) {
    const offer = passkeys && v.challenge.devices.webauthn.length > 0;
    const body = mfaPage(reply, { ...v, passkeyForm: deps.passkeyFactor?.form });
    return reply.page({ title: 'mfa.title', body, scripts: offer ? deps.passkeyScripts : [] });
  }

  /** The pending sign-in cannot finish here: gh_mfa goes, the browser is sent back to the sign-in page. */
  function expired(reply: FastifyReply, returnTo: string, status = 400) {
    reply.header('set-cookie', clearMfaCookie(deps.secureCookies));
    return reply
      .status(status)
      .page({ title: 'mfa.title', body: expiredPage(reply.request.locale, loginUrl(returnTo)) });
  }

  /** Forced MFA and no factor: a new authenticator enrolment inside the sign-in (QR code and secret). */
  async function enrolPage(reply: FastifyReply, mfaToken: string, returnTo: string, c: Challenge, error?: string) {
    const action = `/account/mfa?${new URLSearchParams({ returnTo })}`;
    const { uri } = await mfa.signin.enrollAuthenticator({ mfaToken });
    const body = await enrolment(reply, {
      action,
      uri,
      remember: c.allowRemember,
      hiddens: html`<input type="hidden" name="action" value="enroll">`,
      error: error ? notice('error', error) : undefined,
    });
    return reply.page({ title: 'mfa.enrol.title', body });
  }

  app.get('/account/mfa', { config, schema: { hide: true, querystring: Query } }, async (req, reply) => {
    const returnTo = localReturnTo(req.query.returnTo);
    const mfaToken = mfaTokenOf(req);
    if (!mfaToken) return expired(reply, returnTo);
    let c: Challenge;
    try {
      c = await mfa.signin.challenge(mfaToken);
    } catch (err) {
      if (err instanceof AppError && err.code === 'MFA_TOKEN_INVALID') return expired(reply, returnTo);
      throw err;
    }
    if (!c.enrolled) return enrolPage(reply, mfaToken, returnTo, c);
    const chosen =
      offered(c, req.query.method as Method | undefined, req.query.deviceId, passkeys) ?? defaultMethod(c, passkeys);
    return show(reply, { challenge: c, returnTo, ...chosen });
  });

  app.post(
    '/account/mfa',
    { config, preHandler: formGuard(app), schema: { hide: true, querystring: Query, body: Body } },
    async (req, reply) => {
      const returnTo = localReturnTo(req.query.returnTo);
      const mfaToken = mfaTokenOf(req);
      if (!mfaToken) return expired(reply, returnTo);
      const b = req.body as BodyT;
      const client = clientOf(req);
      const rememberDevice = b.rememberDevice !== undefined;
      const code = b.code ?? '';
      let c: Challenge | undefined;
      try {
        c = await mfa.signin.challenge(mfaToken);
        const finished = async (f: { response: Record<string, unknown>; remember?: RememberCookie }) => {
          const cookies = await signedInCookies(deps, f.response.refreshToken, f.remember);
          reply.header('set-cookie', [...cookies, clearMfaCookie(deps.secureCookies)]);
          const codes = f.response.recoveryCodes;
          if (Array.isArray(codes) && codes.length > 0)
            return reply.page({
              title: 'mfa.codes.title',
              body: recoveryCodes(req.locale, codes as string[], returnTo),
            });
          return reply.redirect(returnTo, 303);
        };
        switch (b.action) {
          case 'totp':
            return await finished(
              await mfa.signin.verifyAuthenticator({ mfaToken, value: code, rememberDevice }, client),
            );
          case 'enroll':
            return await finished(
              await mfa.signin.enrollAuthenticatorVerify({ mfaToken, token: code, rememberDevice }, client),
            );
          case 'sms':
          case 'email': {
            const body = { mfaToken, otcToken: b.otcToken ?? '', code, rememberDevice };
            if (b.action === 'email') return await finished(await mfa.codes.verifyEmail(body, client));
            if (!b.deviceId) throw new AppError('VALIDATION', 'body.deviceId is required: the SMS device');
            return await finished(await mfa.codes.verifySms(body, client, b.deviceId));
          }
          case 'send-sms':
          case 'send-email': {
            const sms = b.action === 'send-sms';
            const r = sms
              ? await mfa.codes.requestSms({ mfaToken }, b.deviceId ?? '')
              : await mfa.codes.requestEmail({ mfaToken });
            const v = { challenge: c, returnTo, method: (sms ? 'sms' : 'email') as Method, deviceId: b.deviceId };
            return show(reply, { ...v, sent: { otcToken: r.otcToken } });
          }
          case 'passkey': {
            if (!deps.passkeyFactor || !b.deviceId || !b.response || !b.webauthnToken)
              throw new AppError(
                'VALIDATION',
                'body.response, webauthnToken and deviceId are required: the passkey step',
              );
            const { response, webauthnToken, deviceId } = b;
            const p = { mfaToken, deviceId, response, webauthnToken, rememberDevice };
            return await finished(await deps.passkeyFactor.verify(p, client));
          }
          default: {
            // The factors go, and the pending sign-in with them (as the API's recover): the user signs in again,
            // and a forced policy then enrols a new factor.
            await mfa.signin.recover({ email: c.userEmail ?? '', recoveryCode: code }, client);
            reply.header('set-cookie', clearMfaCookie(deps.secureCookies));
            const text = t(req.locale, 'mfa.recovery.done');
            return reply.page({
              title: 'mfa.title',
              body: expiredPage(req.locale, loginUrl(returnTo), { text, kind: 'info' }),
            });
          }
        }
      } catch (err) {
        if (err instanceof AppError && err.code === 'MFA_TOKEN_INVALID') return expired(reply, returnTo);
        const error = refusal(reply, err);
        if (!c) return expired(reply, returnTo, reply.statusCode);
        if (b.action === 'enroll') {
          // A wrong first code: the same QR code and secret again (the enrolment in progress stays).
          if (!isOtpauth(b.uri) || (err instanceof AppError && err.code === 'MFA_NO_PENDING_ENROLLMENT'))
            return enrolPage(reply, mfaToken, returnTo, c, error);
          const action = `/account/mfa?${new URLSearchParams({ returnTo })}`;
          const hiddens = html`<input type="hidden" name="action" value="enroll">`;
          const body = await enrolment(reply, {
            action,
            uri: b.uri,
            remember: c.allowRemember,
            hiddens,
            error: notice('error', error),
          });
          return reply.page({ title: 'mfa.enrol.title', body });
        }
        const method: Method =
          b.action === 'passkey'
            ? 'passkey'
            : b.action === 'recover'
              ? 'recovery'
              : b.action.endsWith('sms')
                ? 'sms'
                : b.action.endsWith('email')
                  ? 'email'
                  : 'totp';
        // A wrong sent code keeps its otcToken (it survives a few guesses); an expired one asks for a new send.
        const sent =
          (method === 'sms' || method === 'email') &&
          !b.action.startsWith('send') &&
          b.otcToken &&
          !(err instanceof AppError && err.code === 'MFA_INVALID_OTC')
            ? { otcToken: b.otcToken }
            : undefined;
        return show(reply, { challenge: c, returnTo, method, deviceId: b.deviceId, sent, error });
      }
    },
  );
};
