import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { clientOf, LoginAnswer, sendLogin } from './http.ts';
import { AuthStrategies, AuthStrategiesPatch, PostloginBody, PreloginBody, TypeParams } from './schema.ts';
import type { PasswordlessService } from './service.ts';

const tags = ['passwordless'];
const P = '/identity/resources/auth/v1/passwordless';
const C = '/identity/resources/configurations/v1/auth/strategies';

export const passwordlessRoutes: FastifyPluginAsyncTypebox<{
  passwordless: PasswordlessService;
  environment: EnvironmentService;
  secureCookies: boolean;
}> = async (app, deps) => {
  const { passwordless } = deps;

  app.post(
    `${P}/:type/prelogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'Send a sign-in link (magiclink) or code (code: email, smscode: SMS); the same answer for unknown identifiers',
        params: TypeParams,
        body: PreloginBody,
        response: { 200: Type.Object({}), 201: Type.Object({ phoneNumber: Type.Optional(Type.String()) }) },
      },
    },
    async (req, reply) => {
      const r = await passwordless.prelogin(req.params.type, req.body, clientOf(req));
      return reply.status(req.params.type === 'magiclink' ? 200 : 201).send(r);
    },
  );

  app.post(
    `${P}/:type/postlogin`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Finish a passwordless sign-in with the link token or the code (codes also need the identifier)',
        params: TypeParams,
        body: PostloginBody,
        response: { 201: LoginAnswer },
      },
    },
    async (req, reply) =>
      sendLogin(
        reply,
        await passwordless.postlogin(req.params.type, req.body, clientOf(req)),
        deps.environment,
        deps.secureCookies,
        201,
      ),
  );

  app.get(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Sign-in methods of the environment (password, magic link, email code, SMS code)',
        response: { 200: AuthStrategies },
      },
    },
    async () => passwordless.settings(),
  );

  app.get(
    `${C}/public`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Sign-in methods of the environment, for login pages',
        response: { 200: AuthStrategies },
      },
    },
    async () => passwordless.settings(),
  );

  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Enable or disable sign-in methods and set link/code lifetimes (partial)',
        body: AuthStrategiesPatch,
        response: { 200: AuthStrategies },
      },
    },
    async (req) => passwordless.updateSettings(req.body as never),
  );
};
