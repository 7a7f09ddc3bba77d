import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { ResetService } from './reset.service.ts';
import type { VerificationService } from './verification.service.ts';
import { breachedResetRoutes } from './breached.routes.ts';

const U = '/identity/resources/users';
const Ok = Type.Object({});
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 512, description });
const ResetRequest = Type.Object({
  identifier: Type.Optional(Type.String({ maxLength: 320, description: 'email, phone number (E.164) or username' })),
  identifierType: Type.Optional(
    Type.Union([Type.Literal('email'), Type.Literal('phoneNumber'), Type.Literal('username')], {
      description: 'default email',
    }),
  ),
  email: Type.Optional(Type.String({ maxLength: 320, description: 'alias of identifier with identifierType email' })),
  emailMetadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const SessionId = Type.Object({ sessionId: Type.String() });
const tags = ['password reset'];
const vtags = ['email verification'];

function me(req: FastifyRequest): string {
  if (req.auth?.kind !== 'user') throw new AppError('WRONG_TOKEN_KIND', 'This route accepts user tokens only');
  return req.auth.userId;
}

export const recoveryRoutes: FastifyPluginAsyncTypebox<{
  reset: ResetService;
  verification: VerificationService;
}> = async (app, { reset, verification }) => {
  // -- password reset --
  app.post(
    `${U}/v1/passwords/reset`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Email a reset link (1 hour, single use) when the user exists; the same answer when not',
        body: ResetRequest,
        response: { 201: Ok },
      },
    },
    async (req, reply) => (await reset.requestByEmail(req.body, req.ip), reply.code(201).send({})),
  );
  app.post(
    `${U}/v2/passwords/reset/email`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Email a reset link; answers a session id whether or not the user exists',
        body: ResetRequest,
        response: { 200: SessionId },
      },
    },
    async (req) => reset.requestByEmail(req.body, req.ip),
  );
  app.post(
    `${U}/v2/passwords/reset/sms`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          "Text a 6-digit code (10 minutes, 5 tries) to the user's primary phone; answers a session id either way",
        body: ResetRequest,
        response: { 200: SessionId },
      },
    },
    async (req) => reset.requestBySms(req.body, req.ip),
  );
  app.post(
    `${U}/v2/passwords/reset/sms/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'Check the SMS code; answers {userId, token} for passwords/reset/verify (400 wrong, 410 expired or used, 429 too many tries)',
        body: Type.Object({ otcToken: Id('the code from the SMS'), sessionId: Id('from reset/sms') }),
        response: { 200: Type.Object({ userId: Type.String(), token: Type.String() }) },
      },
    },
    async (req) => reset.verifySmsCode(req.body),
  );
  app.post(
    `${U}/v1/passwords/reset/validate`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Check a reset token without using it: 200, 400 invalid, 410 expired or used',
        body: Type.Object({ userId: Id('user id'), token: Id('reset token') }),
        response: { 200: Ok },
      },
    },
    async (req) => (await reset.validate(req.body), {}),
  );
  app.post(
    `${U}/v1/passwords/reset/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          "Set a new password with a reset token (the account's password policy and history apply); ends the user's sessions",
        body: Type.Object({
          userId: Id('user id'),
          token: Id('reset token'),
          password: Type.String({ minLength: 1, maxLength: 1024 }),
        }),
        response: { 201: Ok },
      },
    },
    async (req, reply) => (await reset.reset(req.body), reply.code(201).send({})),
  );
  app.post(
    `${U}/v1/:userId/links/generate-password-reset-token`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Generate a reset link for a user (1 hour, single use) to deliver by other means',
        params: Type.Object({ userId: Type.String({ maxLength: 64 }) }),
        response: { 201: Type.Object({ link: Type.String(), token: Type.String(), userId: Type.String() }) },
      },
    },
    async (req, reply) => reply.code(201).send(await reset.vendorLink(req.params.userId)),
  );
  await app.register(breachedResetRoutes, { reset });

  // -- email verification --
  app.post(
    `${U}/v1/email/me`,
    {
      config: guard.identity({ userOnly: true }),
      schema: {
        tags: vtags,
        summary:
          'Send a verification code and link to the given address: your own (verify it) or a new one (change to it once verified)',
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) }),
        response: { 200: Ok },
      },
    },
    async (req) => (await verification.requestForMe(me(req), req.body.email), {}),
  );
  app.post(
    `${U}/v1/email/me/verify`,
    {
      config: guard.identity({ userOnly: true }),
      schema: {
        tags: vtags,
        summary: 'Enter the emailed code: marks the address verified (and makes it yours when it was a change)',
        body: Type.Object({ code: Id('6-digit code'), email: Type.String({ minLength: 1, maxLength: 320 }) }),
        response: { 200: Ok },
      },
    },
    async (req) => (await verification.verifyMine(me(req), req.body), {}),
  );
  app.post(
    `${U}/v1/email/verify`,
    {
      config: guard.public,
      schema: {
        tags: vtags,
        summary: 'Open the emailed verification link ({userId, token}): 200 verified, 400 invalid, 410 expired or used',
        body: Type.Object({ userId: Id('user id'), token: Id('verification token') }),
        response: { 200: Ok },
      },
    },
    async (req) => (await verification.verifyLink(req.body), {}),
  );
  app.post(
    `${U}/v1/:userId/verification-email`,
    {
      config: guard.vendor,
      schema: {
        tags: vtags,
        summary: "Send (again) a user's EmailVerification message; 409 when already verified",
        params: Type.Object({ userId: Type.String({ maxLength: 64 }) }),
        response: { 201: Ok },
      },
    },
    async (req, reply) => (await verification.sendFor(req.params.userId), reply.code(201).send({})),
  );
};
