import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { guard } from '../../http/auth.ts';
import { refreshCookie, SignInAnswer } from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { actorOf, type Finished } from '../mfa/index.ts';
import type { WebAuthnService } from './index.ts';
import * as S from './schema.ts';

const A = '/identity/resources/auth/v1';
const U = '/identity/resources/users/v1/mfa/webauthn';
const D = '/identity/resources/users/webauthn/v1/devices';
const tags = ['webauthn'];

export interface WebAuthnRouteDeps {
  webauthn: WebAuthnService;
  environment: EnvironmentService;
  secureCookies: boolean;
}

const client = (req: FastifyRequest) => ({
  ip: req.ip,
  userAgent: req.headers['user-agent'],
  cookie: req.headers.cookie,
});

export const webauthnRoutes: FastifyPluginAsyncTypebox<WebAuthnRouteDeps> = async (app, deps) => {
  const { webauthn } = deps;

  /** A finished sign-in: the refresh cookie as the password sign-in sets it, and the remember-device cookie. */
  async function answer(reply: FastifyReply, f: Finished, status = 201) {
    const s = await deps.environment.cachedSettings();
    const cookies: string[] = [];
    if (typeof f.response.refreshToken === 'string')
      cookies.push(refreshCookie(f.response.refreshToken, s, deps.secureCookies));
    if (f.remember) {
      const secure = deps.secureCookies || s.cookieSameSite === 'NONE' ? '; Secure' : '';
      const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
      cookies.push(
        `${f.remember.name}=${encodeURIComponent(f.remember.value)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${f.remember.maxAge}${secure}`,
      );
    }
    if (cookies.length) reply.header('set-cookie', cookies);
    return reply.status(status).send(f.response);
  }

  // -- sign-in: WebAuthn as the second factor of a pending sign-in --
  app.post(
    `${A}/user/mfa/webauthn/enroll`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'During a sign-in that requires MFA, start enrolling a WebAuthn device (creation options)',
        body: S.LoginEnrollBody,
        response: { 201: S.PreEnroll },
      },
    },
    async (req, reply) => reply.status(201).send(await webauthn.signin.enroll(req.body)),
  );
  app.post(
    `${A}/user/mfa/webauthn/enroll/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Keep the new WebAuthn device and finish the sign-in (answers recovery codes once)',
        body: S.LoginEnrollVerifyBody,
        response: { 201: SignInAnswer },
      },
    },
    async (req, reply) => answer(reply, await webauthn.signin.enrollVerify(req.body, client(req))),
  );
  app.post(
    `${A}/user/mfa/webauthn/:deviceId`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Request options to verify the pending sign-in with one WebAuthn device',
        params: S.DeviceParams,
        body: S.LoginEnrollBody,
        response: { 201: S.PreVerify },
      },
    },
    async (req, reply) => reply.status(201).send(await webauthn.signin.request(req.params.deviceId, req.body)),
  );
  app.post(
    `${A}/user/mfa/webauthn/:deviceId/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a sign-in with an assertion of the WebAuthn device',
        params: S.DeviceParams,
        body: S.LoginVerifyBody,
        response: { 201: SignInAnswer },
      },
    },
    async (req, reply) => answer(reply, await webauthn.signin.verify(req.params.deviceId, req.body, client(req))),
  );

  // -- passkeys as the first factor --
  app.post(
    `${A}/webauthn/prelogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Passkey sign-in: request options (empty allowCredentials without an email: discoverable credentials)',
        body: S.PreloginBody,
        response: { 201: S.RequestOptions },
      },
    },
    async (req, reply) => reply.status(201).send(await webauthn.signin.prelogin(req.body ?? {})),
  );
  app.post(
    `${A}/webauthn/postlogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Passkey sign-in: verify the assertion and start the session',
        body: S.PostloginBody,
        response: { 201: SignInAnswer },
      },
    },
    async (req, reply) =>
      answer(reply, { response: (await webauthn.signin.postlogin(req.body, client(req))) as Record<string, unknown> }),
  );

  // -- the signed-in user's devices --
  app.get(
    D,
    { config: guard.any(), schema: { tags, summary: 'My WebAuthn devices', response: { 200: S.Devices } } },
    async (req) => webauthn.devices.list(actorOf(req)),
  );
  app.post(
    D,
    {
      config: guard.identity(),
      schema: { tags, summary: 'Start registering a WebAuthn device', response: { 200: S.CreationOptions } },
    },
    async (req) => webauthn.devices.registrationOptions(actorOf(req)),
  );
  app.post(
    `${D}/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Register the WebAuthn device with the browser answer',
        body: S.NewCredential,
        response: { 200: S.Device },
      },
    },
    async (req) => webauthn.devices.registerDevice(actorOf(req), req.body),
  );
  app.delete(
    `${D}/:deviceId`,
    {
      config: guard.identity(),
      schema: { tags, summary: 'Remove a WebAuthn device', params: S.DeviceParams, response: { 200: S.Empty } },
    },
    async (req) => webauthn.devices.remove(actorOf(req), req.params.deviceId),
  );

  // -- the signed-in user's WebAuthn MFA --
  app.post(
    `${U}/enroll`,
    {
      config: guard.identity(),
      schema: { tags, summary: 'Start enrolling a WebAuthn device for MFA', response: { 200: S.PreEnroll } },
    },
    async (req) => webauthn.devices.mfaEnroll(actorOf(req)),
  );
  app.post(
    `${U}/enroll/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Keep the WebAuthn device as a second factor; answers the recovery codes (shown once)',
        body: S.EnrollVerifyBody,
        response: { 200: S.Enrolled },
      },
    },
    async (req) => webauthn.devices.mfaEnrollVerify(actorOf(req), req.body),
  );
  app.post(
    `${U}/:deviceId/disable`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Request options to prove the WebAuthn device to be removed',
        params: S.DeviceParams,
        response: { 200: S.PreVerify },
      },
    },
    async (req) => webauthn.devices.mfaDisable(actorOf(req), req.params.deviceId),
  );
  app.post(
    `${U}/:deviceId/disable/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove the WebAuthn device with an assertion of it (an environment token needs none)',
        params: S.DeviceParams,
        body: S.DisableVerifyBody,
        response: { 200: S.Empty },
      },
    },
    async (req) => webauthn.devices.mfaDisableVerify(actorOf(req), req.params.deviceId, req.body ?? {}),
  );
};
