import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { clientOf, LoginAnswer, sendLogin } from '../passwordless/index.ts';
import { AppError } from '../../http/errors.ts';
import {
  ActivateBody,
  ActivateCodeBody,
  ResendBody,
  SignUpBody,
  SignUpResponse,
  SignUpUsernameBody,
  SignUpUsernameResponse,
  Strategy,
  StrategyBody,
  StrategyQuery,
} from './schema.ts';
import type { SignupService } from './service.ts';
import { signupStrategiesRoutes } from './strategies.routes.ts';

const tags = ['sign-up'];
const U = '/identity/resources/users/v1';

export const signupRoutes: FastifyPluginAsyncTypebox<{
  signup: SignupService;
  environment: EnvironmentService;
  secureCookies: boolean;
}> = async (app, deps) => {
  const { signup } = deps;

  app.post(
    `${U}/signUp`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Sign up: a new account and its first user (when allowSignups); an activation email follows',
        body: SignUpBody,
        response: { 201: SignUpResponse },
      },
    },
    async (req, reply) => reply.status(201).send(await signup.signUp(req.body, clientOf(req))),
  );

  app.post(
    `${U}/signUp/username`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'Sign up with a username and no email (when allowSignups): a new account and its first user, signed in at once',
        body: SignUpUsernameBody,
        response: { 201: SignUpUsernameResponse },
      },
    },
    async (req, reply) => {
      // The schema does not declare an email, so it would be silently ignored: refused, naming the route that takes one.
      if ((req.body as Record<string, unknown>).email !== undefined) {
        const rule = `body.email is not accepted here: a sign-up with an email is POST ${U}/signUp (it takes a username too)`;
        throw new AppError('VALIDATION', rule, { fields: ['email'] });
      }
      const r = await signup.signUpWithUsername(req.body, clientOf(req));
      return sendLogin(reply, r, deps.environment, deps.secureCookies, 201, r.authResponse?.refreshToken);
    },
  );

  app.post(
    `${U}/activate`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Activate with the emailed link (userId, token); sets the password when given; signs in',
        body: ActivateBody,
        response: { 200: LoginAnswer },
      },
    },
    async (req, reply) =>
      sendLogin(reply, await signup.activate(req.body, clientOf(req)), deps.environment, deps.secureCookies),
  );

  app.post(
    `${U}/activate/code`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Activate with the emailed code (userId, code); sets the password when given; signs in',
        body: ActivateCodeBody,
        response: { 200: LoginAnswer },
      },
    },
    async (req, reply) =>
      sendLogin(reply, await signup.activate(req.body, clientOf(req)), deps.environment, deps.secureCookies),
  );

  app.get(
    `${U}/activate/strategy`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Whether activation must set a password (the link must be valid)',
        querystring: StrategyQuery,
        response: { 200: Type.Object({ shouldSetPassword: Type.Boolean() }) },
      },
    },
    async (req) => signup.strategy(req.query.userId, req.query.token),
  );

  app.post(
    `${U}/activate/reset`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Send the activation email again (same answer for every email)',
        body: ResendBody,
        response: { 201: Type.Object({}) },
      },
    },
    async (req, reply) => {
      await signup.resend(req.body.email, clientOf(req));
      return reply.status(201).send({});
    },
  );

  app.post(
    `${U}/:userId/links/generate-activation-token`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'A fresh activation link for a user (not emailed)',
        params: Type.Object({ userId: Type.String({ maxLength: 64 }) }),
        response: { 201: Type.Object({ link: Type.String(), token: Type.String(), userId: Type.String() }) },
      },
    },
    async (req, reply) => reply.status(201).send(await signup.generateLink(req.params.userId)),
  );

  const C = '/identity/resources/configurations/v1/activation/strategies';
  app.get(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Activation strategy (link or code) and its lifetime in minutes',
        response: { 200: Strategy },
      },
    },
    async () => signup.activationSettings(),
  );
  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Set the activation strategy and lifetime (partial)',
        body: StrategyBody,
        response: { 200: Strategy },
      },
    },
    async (req) => signup.updateActivationSettings(req.body),
  );
  await app.register(signupStrategiesRoutes, { signup, environment: deps.environment });
};
