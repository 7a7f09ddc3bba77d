import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../http/errors.ts';
import { formGuard } from '../../http/pages/kit.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t } from '../../http/pages/text.ts';
import { actorOf, browserSession, isRecent, mfaTokenOf, refusedMe, sessionOr303 } from '../account-pages/index.ts';
import { clientOf, failureText, finishSignIn, messagePage, statusOf } from '../signin-pages/index.ts';
import { assertionOf, credentialOf, type PasskeyPagesDeps } from './deps.ts';

const hide = true;
const config = { auth: 'public' as const };
/** Every form's common fields; optional to the schema, so a missing CSRF token is formGuard's 403, not a 400. */
const common = {
  _csrf: Type.Optional(Type.String({ maxLength: 512 })),
  returnTo: Type.Optional(Type.String({ maxLength: 2000 })),
};
const Response = Type.Optional(Type.String({ maxLength: 65536 }));
const DeviceId = Type.String({ format: 'uuid' });
const done = (what: string) => `/account/me?done=${what}#passkeys`;

/**
 * The passkey pages: registration and removal on /account/me, passkey sign-in from /account/login, and the options of
 * the passkey step of /account/mfa (its verify is the MFA page's own form post). The options endpoints answer JSON to
 * passkeys.js; the form posts answer a redirect or a page. Same services and rules as the API's WebAuthn routes.
 */
export const passkeyPagesRoutes: FastifyPluginAsyncTypebox<PasskeyPagesDeps> = async (app, deps) => {
  const preHandler = formGuard(app);
  const { webauthn, account } = deps;

  /** The signed-in session whose sign-in is recent enough to change factors (the API's identity rule). */
  async function recentSession(req: FastifyRequest) {
    const s = await browserSession(account, req);
    if (!s) throw new AppError('UNAUTHENTICATED', 'Sign in first: no browser session');
    if (!isRecent(account, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
    return s;
  }

  // POST /identity/resources/users/webauthn/v1/devices: creation options for the signed-in user.
  app.post(
    '/account/passkeys/options',
    { config, preHandler, schema: { hide, body: Type.Object(common) } },
    async (req) => webauthn.pages.registrationOptions((await recentSession(req)).user.id),
  );

  // POST …/devices/verify: the browser's new credential is kept.
  app.post(
    '/account/passkeys',
    {
      config,
      preHandler,
      schema: {
        hide,
        body: Type.Object({ ...common, name: Type.Optional(Type.String({ maxLength: 100 })), response: Response }),
      },
    },
    async (req, reply) => {
      const s = await sessionOr303(account, req, reply);
      if (!s) return reply;
      try {
        if (!isRecent(account, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        await webauthn.pages.register(s.user.id, credentialOf(req.body.response, req.body.name));
      } catch (err) {
        return refusedMe(account, req, reply, s, 'passkeys', err);
      }
      return reply.redirect(done('passkey-added'), 303);
    },
  );

  // DELETE …/devices/{deviceId}: a recent sign-in, as the API's identity rule (the last factor under a forcing
  // policy stays, as there).
  app.post(
    '/account/passkeys/remove',
    { config, preHandler, schema: { hide, body: Type.Object({ ...common, deviceId: DeviceId }) } },
    async (req, reply) => {
      const s = await sessionOr303(account, req, reply);
      if (!s) return reply;
      try {
        if (!isRecent(account, s)) throw new AppError('RECENT_AUTHENTICATION_REQUIRED');
        await webauthn.devices.remove(actorOf(s), req.body.deviceId);
      } catch (err) {
        return refusedMe(account, req, reply, s, 'passkeys', err);
      }
      return reply.redirect(done('passkey-removed'), 303);
    },
  );

  // POST /identity/resources/auth/v1/webauthn/prelogin without an email: discoverable credentials.
  app.post(
    '/account/login/passkey/options',
    { config, preHandler, schema: { hide, body: Type.Object(common) } },
    async () => webauthn.pages.signInOptions(),
  );

  // POST …/webauthn/postlogin: the session starts as every sign-in's (gates: MFA unless the passkey verified the
  // user), then finishes as the password form's: gh_refresh and returnTo, or the MFA step.
  app.post(
    '/account/login/passkey',
    { config, preHandler, schema: { hide, body: Type.Object({ ...common, response: Response }) } },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      try {
        const answer = await webauthn.signin.postlogin(assertionOf(req.body.response), clientOf(req));
        const finished = await finishSignIn(deps.signin, reply, answer, returnTo);
        if (finished) return finished;
        throw new AppError('WEBAUTHN_VERIFICATION_FAILED');
      } catch (err) {
        const unknown = err instanceof AppError && err.code === 'WEBAUTHN_CREDENTIAL_UNKNOWN';
        const text = failureText(req.locale, err, unknown ? 'passkey.error.unknown' : 'passkey.error.failed');
        return messagePage(reply, 'signin.title', 'error', text, statusOf(err));
      }
    },
  );

  // POST /identity/resources/auth/v1/user/mfa/webauthn/{deviceId}: request options bound to the pending sign-in.
  app.post(
    '/account/mfa/passkey/options',
    { config, preHandler, schema: { hide, body: Type.Object({ ...common, deviceId: DeviceId }) } },
    async (req) => {
      const mfaToken = mfaTokenOf(req);
      if (!mfaToken) throw new AppError('MFA_TOKEN_INVALID', t(req.locale, 'mfa.expired'));
      return webauthn.signin.request(req.body.deviceId, { mfaToken });
    },
  );
};
