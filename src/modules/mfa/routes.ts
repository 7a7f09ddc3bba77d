import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { Actor } from './devices.ts';
import type { MfaService } from './index.ts';
import * as S from './schema.ts';
import type { Finished } from './service.ts';

const A = '/identity/resources/auth/v1/user/mfa';
const U = '/identity/resources/users/v1/mfa';
const C = '/identity/resources/configurations/v1';
const tags = ['mfa'];
const DeviceParams = Type.Object({ deviceId: Type.String({ format: 'uuid', description: 'an MFA device id' }) });

export interface MfaRouteDeps {
  mfa: MfaService;
  environment: EnvironmentService;
  secureCookies: boolean;
}

const client = (req: FastifyRequest) => ({
  ip: req.ip,
  userAgent: req.headers['user-agent'],
  cookie: req.headers.cookie,
});
/** As `client`, with the request's audit entry of a 201 answer, stored by the sign-in's session-start statement. */
const auditedClient = (req: FastifyRequest) => ({
  ...client(req),
  audit: (body: Record<string, unknown>) => req.auditInline?.(201, body),
});

/** Self-service routes: a user token acts on itself; an environment token on the user of the gatehouse-user-id header. */
export function actorOf(req: FastifyRequest): Actor {
  const auth = req.auth;
  if (auth?.kind === 'user') return { userId: auth.userId, tenantId: auth.tenantId, admin: false };
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId) throw new AppError('VALIDATION', 'Header gatehouse-user-id is required with an environment token');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(userId))
    throw new AppError('USER_NOT_FOUND');
  return { userId, tenantId: tenantHeader(req), admin: true };
}

/** Policy scope: a user token its own account; an environment token the tenant header, else the environment. */
const scopeOf = (req: FastifyRequest) => (req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req));

export const mfaRoutes: FastifyPluginAsyncTypebox<MfaRouteDeps> = async (app, deps) => {
  const { mfa } = deps;

  /** Answers a finished sign-in: the refresh cookie as the password sign-in sets it, and the remember-device cookie. */
  async function answer(reply: FastifyReply, f: Finished, status = 201) {
    // The cookie settings as the password sign-in reads them (cached in process): not a statement per sign-in.
    const s = await deps.environment.cachedSettings();
    const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
    const secure = deps.secureCookies || sameSite === 'None' ? '; Secure' : '';
    const cookies: string[] = [];
    if (typeof f.response.refreshToken === 'string') {
      cookies.push(
        `gh_refresh=${encodeURIComponent(f.response.refreshToken)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${s.defaultRefreshTokenExpiration}${secure}`,
      );
    }
    if (f.remember)
      cookies.push(
        `${f.remember.name}=${encodeURIComponent(f.remember.value)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${f.remember.maxAge}${secure}`,
      );
    if (cookies.length) reply.header('set-cookie', cookies);
    return reply.status(status).send(f.response);
  }

  // -- sign-in: second factor --
  app.post(
    `${A}/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a sign-in with a code of the authenticator app',
        body: S.VerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) => answer(reply, await mfa.signin.verifyAuthenticator(req.body, auditedClient(req))),
  );
  app.post(
    `${A}/authenticator/:deviceId/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a sign-in with a code of one authenticator device',
        params: DeviceParams,
        body: S.VerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) =>
      answer(reply, await mfa.signin.verifyAuthenticator(req.body, auditedClient(req), req.params.deviceId)),
  );
  app.post(
    `${A}/authenticator/enroll`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'During a sign-in that requires MFA, start enrolling an authenticator app',
        body: S.LoginEnrollBody,
        response: { 201: S.Qr },
      },
    },
    async (req, reply) => reply.status(201).send(await mfa.signin.enrollAuthenticator(req.body)),
  );
  app.post(
    `${A}/authenticator/enroll/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Verify the first code of that enrolment and finish the sign-in (answers recovery codes once)',
        body: S.LoginEnrollVerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) => answer(reply, await mfa.signin.enrollAuthenticatorVerify(req.body, client(req))),
  );
  app.post(
    `${A}/recover`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: "Spend a recovery code: removes the user's MFA factors",
        body: S.RecoverBody,
        response: { 200: S.Empty },
      },
    },
    async (req) => mfa.signin.recover(req.body, client(req)),
  );
  app.get(
    `${C}/mfa-policy/allow-remember-device`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Whether the pending sign-in may remember this device',
        querystring: Type.Object({ mfaToken: Type.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: S.AllowRemember },
      },
    },
    async (req) => mfa.signin.allowRemember(req.query.mfaToken),
  );

  // -- sign-in: SMS and email codes --
  app.post(
    `${A}/sms/:deviceId`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Send a code to an SMS device of the pending sign-in',
        params: DeviceParams,
        body: S.CodeRequestBody,
        response: { 201: S.OtcResponse },
      },
    },
    async (req, reply) => reply.status(201).send(await mfa.codes.requestSms(req.body, req.params.deviceId)),
  );
  app.post(
    `${A}/sms/:deviceId/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a sign-in with the SMS code',
        params: DeviceParams,
        body: S.CodeVerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) => answer(reply, await mfa.codes.verifySms(req.body, client(req), req.params.deviceId)),
  );
  app.post(
    `${A}/emailcode`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Send a code to the email address of the pending sign-in',
        body: S.CodeRequestBody,
        response: { 201: S.OtcResponse },
      },
    },
    async (req, reply) => reply.status(201).send(await mfa.codes.requestEmail(req.body)),
  );
  app.post(
    `${A}/emailcode/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a sign-in with the email code',
        body: S.CodeVerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) => answer(reply, await mfa.codes.verifyEmail(req.body, client(req))),
  );
  app.post(
    `${A}/sms/enroll`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'During a sign-in that requires MFA, start enrolling a phone (sends a code)',
        body: S.LoginSmsEnrollBody,
        response: { 201: S.OtcResponse },
      },
    },
    async (req, reply) => reply.status(201).send(await mfa.codes.enrollSmsAtSignIn(req.body)),
  );
  app.post(
    `${A}/sms/enroll/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Verify the code of that enrolment and finish the sign-in',
        body: S.LoginSmsEnrollVerifyBody,
        response: { 201: S.AuthResponse },
      },
    },
    async (req, reply) => answer(reply, await mfa.codes.enrollSmsAtSignInVerify(req.body, client(req))),
  );

  // -- self-service factors --
  for (const path of [`${U}/enroll`, `${U}/authenticator/enroll`]) {
    app.post(
      path,
      {
        config: guard.identity(),
        schema: {
          tags,
          summary: 'Start enrolling an authenticator app (QR code and otpauth URI)',
          response: { 200: S.Qr },
        },
      },
      async (req) => mfa.devices.enrollAuthenticator(actorOf(req)),
    );
  }
  for (const path of [`${U}/enroll/verify`, `${U}/authenticator/enroll/verify`]) {
    app.post(
      path,
      {
        config: guard.identity(),
        schema: {
          tags,
          summary: 'Verify the first code of the authenticator app; answers the recovery codes (shown once)',
          body: S.TokenBody,
          response: { 200: S.RecoveryCodes },
        },
      },
      async (req) => mfa.devices.verifyAuthenticator(actorOf(req), req.body.token),
    );
  }
  app.get(
    `${U}/devices`,
    {
      config: guard.any(),
      schema: { tags, summary: 'My MFA devices', response: { 200: S.Devices } },
    },
    async (req) => mfa.devices.list(actorOf(req)),
  );
  app.post(
    `${U}/disable`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove the authenticator app whose current code is given',
        body: S.OptionalTokenBody,
        response: { 200: S.Empty },
      },
    },
    async (req) => mfa.devices.disableAuthenticator(actorOf(req), req.body?.token),
  );
  app.post(
    `${U}/authenticator/:deviceId/disable/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove one authenticator device (a user gives its current code)',
        params: DeviceParams,
        body: S.OptionalTokenBody,
        response: { 200: S.Empty },
      },
    },
    async (req) => mfa.devices.disableAuthenticator(actorOf(req), req.body?.token, req.params.deviceId),
  );
  app.post(
    `${U}/sms/enroll`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Start enrolling a phone for SMS MFA (sends a code)',
        body: S.SmsEnrollBody,
        response: { 200: S.OtcResponse },
      },
    },
    async (req) => mfa.codes.enrollSms(actorOf(req), req.body.phoneNumber),
  );
  app.post(
    `${U}/sms/enroll/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Verify the code of the phone enrolment',
        body: S.OtcBody,
        response: { 200: S.SmsEnrolled },
      },
    },
    async (req) => mfa.codes.enrollSmsVerify(actorOf(req), req.body),
  );
  app.post(
    `${U}/sms/:deviceId/disable`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Send a code to the SMS device to be removed',
        params: DeviceParams,
        response: { 200: S.OtcResponse },
      },
    },
    async (req) => mfa.codes.disableSms(actorOf(req), req.params.deviceId),
  );
  app.post(
    `${U}/sms/:deviceId/disable/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove the SMS device with the code sent to it',
        params: DeviceParams,
        body: S.OtcBody,
        response: { 200: S.Empty },
      },
    },
    async (req) => mfa.codes.disableSmsVerify(actorOf(req), req.params.deviceId, req.body),
  );
  app.post(
    '/identity/resources/vendor-only/users/v1/:userId/mfa/unenroll',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Remove every MFA factor of a user',
        params: Type.Object({ userId: Type.String({ format: 'uuid' }) }),
        response: { 200: S.Empty },
      },
    },
    async (req) => mfa.devices.unenroll(req.params.userId),
  );

  // -- configuration (environment) and policy (environment or account) --
  app.get(
    `${C}/mfa`,
    { config: guard.vendor, schema: { tags, summary: 'MFA configuration', response: { 200: S.Config } } },
    async () => mfa.policy.getConfig(),
  );
  app.post(
    `${C}/mfa`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Update the MFA configuration', body: S.ConfigBody, response: { 201: S.Config } },
    },
    async (req, reply) => reply.status(201).send(await mfa.policy.setConfig(req.body)),
  );
  app.get(
    `${C}/mfa/strategies`,
    { config: guard.vendor, schema: { tags, summary: 'MFA strategies', response: { 200: S.Strategies } } },
    async () => mfa.policy.strategies(),
  );
  app.post(
    `${C}/mfa/strategies`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Turn an MFA strategy on or off', body: S.StrategyBody, response: { 201: S.Empty } },
    },
    async (req, reply) => reply.status(201).send(await mfa.policy.setStrategy(req.body)),
  );

  const P = `${C}/mfa-policy`;
  app.get(
    P,
    {
      config: guard.any('fe.secure.read.securityPolicy'),
      schema: {
        tags,
        summary: 'The MFA policy that applies (account via tenant header, else environment)',
        response: { 200: S.Policy },
      },
    },
    async (req) => mfa.policy.get(scopeOf(req)),
  );
  app.get(
    `${P}/vendor`,
    {
      config: guard.any('fe.secure.read.securityPolicy'),
      schema: { tags, summary: 'The environment MFA policy', response: { 200: S.Policy } },
    },
    async () => mfa.policy.getEnvironment(),
  );
  app.post(
    P,
    {
      config: guard.any('fe.secure.write.securityPolicy'),
      schema: {
        tags,
        summary: "Create the scope's own MFA policy (409 when it has one)",
        body: S.PolicyBody,
        response: { 201: S.Policy },
      },
    },
    async (req, reply) => reply.status(201).send(await mfa.policy.create(scopeOf(req), req.body)),
  );
  app.patch(
    P,
    {
      config: guard.any('fe.secure.write.securityPolicy'),
      schema: {
        tags,
        summary: "Update the scope's own MFA policy (404 when it has none)",
        body: S.PolicyBody,
        response: { 200: S.Policy },
      },
    },
    async (req) => mfa.policy.update(scopeOf(req), req.body),
  );
  app.put(
    P,
    {
      config: guard.any('fe.secure.write.securityPolicy'),
      schema: {
        tags,
        summary: "Create or update the scope's own MFA policy",
        body: S.PolicyBody,
        response: { 200: S.Policy },
      },
    },
    async (req) => mfa.policy.upsert(scopeOf(req), req.body),
  );
};
