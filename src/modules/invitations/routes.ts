import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { asSeenBy } from '../users/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { grantorOf } from '../roles/index.ts';
import { clientOf, LoginAnswer, sendLogin } from '../passwordless/index.ts';
import { AcceptBody, AcceptCodeBody, InvitationConfiguration, InvitedUser, InviteBody, ResetBody } from './schema.ts';
import type { InvitationsService } from './service.ts';

const tags = ['invitations'];
const U = '/identity/resources/users';
const Strategy = Type.Object({
  strategy: Type.Union([Type.Literal('link'), Type.Literal('code')]),
  codeExpiration: Type.Integer({ description: 'minutes' }),
});
const MyInvitation = Type.Object({
  tenantId: Type.String(),
  name: Type.String({ description: "the account's name" }),
  invitedBy: Type.Union([Type.String(), Type.Null()], { description: 'the inviting user, null for the environment' }),
  createdAt: Type.String(),
});
const TenantParams = Type.Object({ tenantId: Type.String({ minLength: 1, maxLength: 255 }) });

/** The signed-in user themselves: not an impersonation or delegated token (`act`), nor an API or machine token. */
function ownSession(req: FastifyRequest): UserAuth {
  const auth = req.auth as UserAuth;
  if (auth.actor || auth.claims.act !== undefined) {
    throw new AppError(
      'OWN_SESSION_REQUIRED',
      'Answering an invitation needs your own signed-in session, not an impersonation, delegated, API or machine token',
    );
  }
  return auth;
}

const StrategyBody = Type.Object(
  {
    strategy: Type.Optional(Type.Union([Type.Literal('link'), Type.Literal('code')])),
    codeExpiration: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'minutes' })),
  },
  { minProperties: 1 },
);

export const invitationsRoutes: FastifyPluginAsyncTypebox<{
  invitations: InvitationsService;
  environment: EnvironmentService;
  secureCookies: boolean;
}> = async (app, deps) => {
  const { invitations } = deps;

  app.post(
    `${U}/v2`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Invite a user to the account (tenant header, or the admin's own account); emails the invitation",
        body: InviteBody,
        response: { 201: InvitedUser },
      },
    },
    async (req, reply) => {
      return reply
        .status(201)
        .send(asSeenBy(req.auth, await invitations.invite(accountOf(req), req.body, grantorOf(req.auth!))));
    },
  );

  app.get(
    `${U}/v1/me/invitations`,
    {
      config: guard.user(),
      schema: {
        tags,
        summary: 'My invitations to accounts waiting for my answer (they give no access until accepted)',
        response: { 200: Type.Array(MyInvitation) },
      },
    },
    async (req) => invitations.listMine(ownSession(req).userId),
  );

  for (const answer of ['accept', 'decline'] as const) {
    app.post(
      `${U}/v1/me/invitations/:tenantId/${answer}`,
      {
        config: guard.user(),
        schema: {
          tags,
          params: TenantParams,
          response: { 200: Type.Object({}) },
          summary:
            answer === 'accept'
              ? 'Accept my invitation to an account (refused while my password is one an administrator set: use the emailed link)'
              : 'Decline my invitation to an account (the pending membership is removed)',
        },
      },
      async (req) => {
        await invitations.answerMine(ownSession(req).userId, req.params.tenantId, answer);
        return {};
      },
    );
  }

  app.post(
    `${U}/v1/invitation/accept`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Accept an invitation with the emailed link (userId, token); signs in to the account',
        body: AcceptBody,
        response: { 200: LoginAnswer },
      },
    },
    async (req, reply) =>
      sendLogin(reply, await invitations.accept(req.body, clientOf(req)), deps.environment, deps.secureCookies),
  );

  app.post(
    `${U}/v1/invitation/accept/code`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Accept an invitation with the emailed code (userId, code); signs in to the account',
        body: AcceptCodeBody,
        response: { 200: LoginAnswer },
      },
    },
    async (req, reply) =>
      sendLogin(
        reply,
        await invitations.accept({ userId: req.body.userId, code: req.body.code }, clientOf(req)),
        deps.environment,
        deps.secureCookies,
      ),
  );

  app.post(
    `${U}/v1/invitation/reset`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: 'Send a pending invitation again with a fresh link/code',
        body: ResetBody,
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => {
      await invitations.resend(accountOf(req), req.body.email, clientOf(req));
      return {};
    },
  );

  app.get(
    '/identity/resources/tenants/invites/v1/configuration',
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'Whether invitations and invitation emails are available',
        response: { 200: InvitationConfiguration },
      },
    },
    async () => ({ tenantInvitationsAllowed: true, emailsEnabled: true }),
  );

  const C = '/identity/resources/configurations/v1/invitation/strategies';
  app.get(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Invitation strategy (link or code) and its lifetime in minutes',
        response: { 200: Strategy },
      },
    },
    async () => invitations.invitationSettings(),
  );
  app.post(
    C,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Set the invitation strategy and lifetime (partial)',
        body: StrategyBody,
        response: { 200: Strategy },
      },
    },
    async (req) => invitations.updateInvitationSettings(req.body),
  );
};
