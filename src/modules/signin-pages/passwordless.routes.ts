import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { formGuard } from '../../http/pages/kit.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { t, type TextKey } from '../../http/pages/text.ts';
import type { PasswordlessType } from '../passwordless/index.ts';
import {
  checkCaptcha,
  clientOf,
  confirmForm,
  failureText,
  finishSignIn,
  messagePage,
  type SigninPagesDeps,
  statusOf,
} from './deps.ts';
import { methodsOf } from './methods.ts';
import { Email, Form, LinkQuery, Token } from './schema.ts';
import { codeBody, type LoginState, loginBody } from './views.ts';

const hide = true;
const Phone = Type.String({ minLength: 1, maxLength: 32, pattern: '^\\+[1-9](?:-?\\d){5,13}$' });
const Code = Type.String({ minLength: 1, maxLength: 32 });

/**
 * Passwordless sign-in through the passwordless service (its enablement, rate limits and equal answers for unknown
 * identifiers): the magic link (request, and the emailed link's confirmation), and email or SMS codes.
 */
export const passwordlessPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  const guard = formGuard(app);
  const loginPage = async (reply: FastifyReply, s: LoginState, status = 200) =>
    reply.status(status).page({ title: 'signin.title', body: loginBody(reply, await methodsOf(deps), s) });

  /** Sends a link or code; a refusal (disabled, limited) re-renders the sign-in page. */
  async function request(
    req: FastifyRequest,
    reply: FastifyReply,
    type: PasswordlessType,
    body: { email?: string; phoneNumber?: string },
    returnTo: string,
  ): Promise<boolean> {
    try {
      await checkCaptcha(deps, req, { email: body.email });
      await deps.passwordless.prelogin(type, body, clientOf(req));
      return true;
    } catch (err) {
      const error = failureText(req.locale, err, 'method.unavailable');
      await loginPage(reply, { email: body.email, returnTo, error }, statusOf(err));
      return false;
    }
  }

  /** Checks the link token or code and signs in; a refusal re-renders `again`. */
  async function verify(
    req: FastifyRequest,
    reply: FastifyReply,
    type: PasswordlessType,
    body: { token: string; email?: string; phoneNumber?: string },
    returnTo: string,
    again: (error: string, status: number) => Promise<FastifyReply>,
  ) {
    const fallback: TextKey = type === 'magiclink' ? 'magic.invalid' : 'code.invalid';
    try {
      const answer = await deps.passwordless.postlogin(type, body, clientOf(req));
      const done = await finishSignIn(deps, reply, answer, returnTo);
      return done ?? again(t(req.locale, fallback), 400);
    } catch (err) {
      return again(failureText(req.locale, err, fallback), statusOf(err));
    }
  }

  app.post(
    '/account/login/magic-link',
    { config: { auth: 'public' }, schema: { hide, body: Form({ email: Email }) }, preHandler: guard },
    async (req, reply) => {
      const returnTo = safeReturnTo(req.body.returnTo);
      if (!(await request(req, reply, 'magiclink', { email: req.body.email }, returnTo))) return reply;
      return loginPage(reply, { email: req.body.email, returnTo, info: t(req.locale, 'magic.sent') });
    },
  );

  // The emailed link: a confirmation button, so a mail scanner that opens links does not use up the token.
  app.get(
    '/account/login/magic-link',
    { config: { auth: 'public' }, schema: { hide, querystring: LinkQuery } },
    async (req, reply) => {
      const { token } = req.query;
      if (!token) return messagePage(reply, 'magic.title', 'error', t(req.locale, 'link.missing'), 400);
      const hidden = { token, returnTo: safeReturnTo(req.query.returnTo) };
      return reply.page({
        title: 'magic.title',
        body: confirmForm(reply, '/account/login/magic-link/confirm', hidden, t(req.locale, 'magic.confirm')),
      });
    },
  );

  app.post(
    '/account/login/magic-link/confirm',
    { config: { auth: 'public' }, schema: { hide, body: Form({ token: Token }) }, preHandler: guard },
    async (req, reply) =>
      verify(req, reply, 'magiclink', { token: req.body.token }, safeReturnTo(req.body.returnTo), (error, status) =>
        messagePage(reply, 'magic.title', 'error', error, status),
      ),
  );

  const codeFlows = [
    { type: 'code' as const, path: '/account/login/code', name: 'email', schema: Email },
    { type: 'smscode' as const, path: '/account/login/sms', name: 'phoneNumber', schema: Phone },
  ];
  for (const flow of codeFlows) {
    const codePage = (reply: FastifyReply, value: string, returnTo: string, error?: string, status = 200) =>
      reply.status(status).page({
        title: 'code.title',
        body: codeBody(reply, {
          action: `${flow.path}/verify`,
          identifier: { name: flow.name, value },
          returnTo,
          error,
        }),
      });
    app.post(
      flow.path,
      { config: { auth: 'public' }, schema: { hide, body: Form({ [flow.name]: flow.schema }) }, preHandler: guard },
      async (req, reply) => {
        const value = (req.body as Record<string, string>)[flow.name] as string;
        const returnTo = safeReturnTo(req.body.returnTo);
        if (!(await request(req, reply, flow.type, { [flow.name]: value }, returnTo))) return reply;
        return codePage(reply, value, returnTo);
      },
    );
    app.post(
      `${flow.path}/verify`,
      {
        config: { auth: 'public' },
        schema: { hide, body: Form({ [flow.name]: flow.schema, code: Code }) },
        preHandler: guard,
      },
      async (req, reply) => {
        const body = req.body as Record<string, string>;
        const value = body[flow.name] as string;
        const returnTo = safeReturnTo(req.body.returnTo);
        return verify(
          req,
          reply,
          flow.type,
          { token: body.code as string, [flow.name]: value },
          returnTo,
          (error, status) => codePage(reply, value, returnTo, error, status),
        );
      },
    );
  }
};
