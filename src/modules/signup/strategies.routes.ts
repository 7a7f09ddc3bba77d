import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { SignupService } from './service.ts';

const Field = Type.Union([Type.Literal('required'), Type.Literal('optional')]);

/** GET /identity/resources/configurations/v1/sign-up/strategies: what a login box's sign-up form offers (no token). */
const SignUpStrategies = Type.Object({
  allowSignUp: Type.Boolean({
    description: 'POST /identity/resources/users/v1/signUp is open (allowSignups of the environment)',
  }),
  strategies: Type.Array(Type.Literal('email'), {
    description: 'open sign-up methods: "email" (with optional username and password) when sign-up is allowed',
  }),
  fields: Type.Object(
    { email: Field, name: Field, username: Field, password: Field, phoneNumber: Field, companyName: Field },
    {
      description: "the sign-up body's fields; a password left out is set at activation",
    },
  ),
  emailVerificationRequired: Type.Boolean({
    description: 'always true: a new user activates with the emailed link or code before signing in',
  }),
  activation: Type.Object({
    strategy: Type.Union([Type.Literal('link'), Type.Literal('code')]),
    expiresInMinutes: Type.Integer(),
    deliverable: Type.Boolean({
      description:
        'the activation email can go out (an email provider or the development outbox, and an active ActivateUser template)',
    }),
  }),
});

export const signupStrategiesRoutes: FastifyPluginAsyncTypebox<{
  signup: SignupService;
  environment: EnvironmentService;
}> = async (app, { signup, environment }) => {
  app.get(
    '/identity/resources/configurations/v1/sign-up/strategies',
    {
      config: guard.public,
      schema: {
        tags: ['sign-up'],
        summary: 'Sign-up methods of the environment for login boxes: allowed, fields, activation',
        response: { 200: SignUpStrategies },
      },
    },
    async () => {
      const [settings, activation, channels] = await Promise.all([
        environment.settings(),
        signup.activationSettings(),
        environment.loginBox.channels(),
      ]);
      return {
        allowSignUp: settings.allowSignups,
        strategies: settings.allowSignups ? ['email' as const] : [],
        fields: {
          email: 'required' as const,
          name: 'optional' as const,
          username: 'optional' as const,
          password: 'optional' as const,
          phoneNumber: 'optional' as const,
          companyName: 'optional' as const,
        },
        emailVerificationRequired: true,
        activation: {
          strategy: activation.strategy,
          expiresInMinutes: activation.codeExpiration,
          deliverable: channels.emailFor('ActivateUser'),
        },
      };
    },
  );
};
