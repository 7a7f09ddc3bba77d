import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { guard } from '../../http/auth.ts';
import { CaptchaPolicy, CaptchaPolicyBody, PublicCaptchaPolicy } from './schema.ts';
import type { CaptchaService } from './service.ts';

const tags = ['captcha policy'];
const C = '/identity/resources/configurations/v1/captcha-policy';

export const captchaRoutes: FastifyPluginAsyncTypebox<{ captcha: CaptchaService }> = async (app, { captcha }) => {
  app.get(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get the captcha policy (the secret key included: environment tokens only); 404 when none was set',
        response: { 200: CaptchaPolicy },
      },
    },
    async () => captcha.get(),
  );

  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create the captcha policy (409 when one exists: change it with PUT)',
        body: CaptchaPolicyBody,
        response: { 201: CaptchaPolicy },
      },
    },
    async (req, reply) => reply.status(201).send(await captcha.create(req.body)),
  );

  app.put(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Replace the captcha policy, creating it when none exists; an omitted ignoredEmails keeps the stored list',
        body: CaptchaPolicyBody,
        response: { 200: CaptchaPolicy },
      },
    },
    async (req) => captcha.update(req.body),
  );

  app.get(
    `${C}/public`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'For login pages: whether sign-in needs a recaptchaToken and the site key to get one with (never the secret)',
        response: { 200: PublicCaptchaPolicy },
      },
    },
    async () => captcha.publicView(),
  );
};
