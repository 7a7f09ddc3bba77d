import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { guard } from '../../http/auth.ts';
import { PolicyHeaders, RotationPolicy, RotationPolicyBody, UserEmailsPolicy, UserEmailsPolicyBody } from './schema.ts';
import type { PasswordService } from './service.ts';
import type { Scope } from './store.ts';

const tags = ['security policies'];
const CONFIG = '/identity/resources/configurations/v1';

/**
 * Password rotation (expiry) and the user emails policy; registered by securityPolicyRoutes with its guards and its
 * scope rule (a user token: its own account; an environment token: the tenant header's account, else the environment).
 */
type Guard = ReturnType<typeof guard.any>;

export const rotationAndEmailRoutes: FastifyPluginAsyncTypebox<{
  passwords: PasswordService;
  read: Guard;
  write: Guard;
  scopeOf: (req: FastifyRequest) => Scope;
}> = async (app, { passwords, read, write, scopeOf: scope }) => {
  const headers = PolicyHeaders;
  const ROTATION = `${CONFIG}/password-rotation`;

  app.get(
    ROTATION,
    {
      config: read,
      schema: {
        tags,
        summary:
          "Get the password rotation (expiry) policy that applies (the account's own, else the environment's); 404 when none. Periods in seconds",
        headers,
        response: { 200: RotationPolicy },
      },
    },
    async (req) => passwords.rotation.get(scope(req)),
  );

  app.post(
    ROTATION,
    {
      config: write,
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary:
          'Create or update the password rotation policy of the environment or of one account; fields left out keep their value (inherited, else isActive false, 90 days, 7 days). Periods in seconds',
        headers,
        body: RotationPolicyBody,
        response: { 200: RotationPolicy },
      },
    },
    async (req) => passwords.rotation.set(scope(req), req.body),
  );

  app.get(
    `${ROTATION}/vendor`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get the environment-level password rotation policy; 404 when none',
        response: { 200: RotationPolicy },
      },
    },
    async () => passwords.rotation.vendor(),
  );

  const EMAILS = `${CONFIG}/user-emails-policy`;
  // Any signed-in caller may read it (a profile page decides whether to offer the email change); only the vendor sets it.
  app.get(
    EMAILS,
    {
      config: guard.any(),
      schema: {
        tags,
        summary:
          'Get the user emails policy (environment level): whether users may change their own email; true until set',
        response: { 200: UserEmailsPolicy },
      },
    },
    async () => passwords.userEmails.get(),
  );

  app.post(
    EMAILS,
    {
      config: guard.vendor,
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary:
          "Create or update the user emails policy (environment level); allowEmailChange false refuses POST /users/v1/email/me to a new address (403), the vendor's email change is not affected",
        body: UserEmailsPolicyBody,
        response: { 200: UserEmailsPolicy },
      },
    },
    async (req) => passwords.userEmails.set(req.body),
  );
};
