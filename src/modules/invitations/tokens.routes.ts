import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { Db } from '../../storage/db.ts';
import { clientOf, type Client } from '../passwordless/index.ts';
import { grantorOf } from '../roles/index.ts';
import type { InvitationsService } from './service.ts';
import { userTenantStatuses, type UserTenantStatus } from './store.ts';
import type { InviteTokensService } from './tokens.service.ts';

const tags = ['account invitations'];
const T = '/identity/resources/tenants/invites';
const InviteTokenDto = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  tenantId: Type.String(),
  userId: Type.Optional(Type.String()),
  token: Type.String(),
  expires: Type.String(),
  shouldSendEmail: Type.Boolean(),
  name: Type.String(),
  roleIds: Type.Array(Type.String()),
});
const Minutes = Type.Integer({ minimum: 1, maximum: 525_600, description: 'lifetime in minutes from now' });
const RoleIds = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true });
const STATUSES = ['PendingInvitation', 'PendingLogin', 'Activated', 'NotActivated'] as const;

/** The member an invite-token call is about: the user token's own user and account, or both headers of an environment call. */
function ownerOf(req: FastifyRequest): { tenantId: string; userId: string } {
  if (req.auth?.kind === 'user') return { tenantId: req.auth.tenantId, userId: req.auth.userId };
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  const tenantId = tenantHeader(req);
  if (!userId || !tenantId)
    throw new AppError(
      'VALIDATION',
      'Headers gatehouse-user-id and gatehouse-tenant-id are required with an environment token',
      { fields: ['gatehouse-user-id', 'gatehouse-tenant-id'] },
    );
  return { tenantId, userId };
}

export interface InviteTokensRouteDeps {
  db: Db;
  tokens: InviteTokensService;
  invitations: InvitationsService;
  /** Sends the activation email again to a user who signed up (signup module). */
  resendActivation: (email: string, client: Client) => Promise<void>;
}

export const inviteTokensRoutes: FastifyPluginAsyncTypebox<InviteTokensRouteDeps> = async (app, deps) => {
  const { tokens } = deps;

  // -- a member's own invite link (one per member and account) --
  app.get(
    `${T}/v1/user`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: "The member's invite link to the account (404 when none)",
        response: { 200: InviteTokenDto },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return tokens.ofOwner(o.tenantId, o.userId);
    },
  );

  const createOwn = async (
    req: FastifyRequest,
    b: { expiresInMinutes: number; shouldSendEmail: boolean; roleIds?: string[] },
  ) =>
    tokens.create({
      ...ownerOf(req),
      expiresInMinutes: b.expiresInMinutes,
      shouldSendEmail: b.shouldSendEmail,
      roleIds: b.roleIds,
      by: grantorOf(req.auth!),
    });

  app.post(
    `${T}/v1/user`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary:
          "Create the member's invite link (replaces an earlier one); whoever signs up or signs in with it joins the account",
        body: Type.Object({
          expiresInMinutes: Minutes,
          shouldSendEmail: Type.Boolean({ description: 'email the member each time someone joins with it' }),
        }),
        response: { 201: InviteTokenDto },
      },
    },
    async (req, reply) =>
      reply.status(201).send(
        await createOwn(req, {
          expiresInMinutes: req.body.expiresInMinutes,
          shouldSendEmail: req.body.shouldSendEmail,
        }),
      ),
  );

  app.post(
    `${T}/v2/user`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Create the member's invite link with the roles joiners get (replaces an earlier one)",
        body: Type.Object({ expiresInMinutes: Minutes, shouldSendEmail: Type.Boolean(), roleIds: RoleIds }),
        response: { 201: InviteTokenDto },
      },
    },
    async (req, reply) => reply.status(201).send(await createOwn(req, req.body)),
  );

  app.patch(
    `${T}/v1/user`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Change the member's invite link: a new lifetime from now, or whether joins are emailed",
        body: Type.Object(
          { expiresInMinutes: Type.Optional(Minutes), shouldSendEmail: Type.Optional(Type.Boolean()) },
          { minProperties: 1 },
        ),
        response: { 200: InviteTokenDto },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return tokens.updateOwner(o.tenantId, o.userId, req.body);
    },
  );

  app.delete(
    `${T}/v1/user`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Delete the member's invite link (it stops working)",
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      await tokens.deleteOwner(o.tenantId, o.userId);
      return {};
    },
  );

  app.post(
    `${T}/v1/verify`,
    {
      config: guard.public,
      schema: {
        tags,
        summary: 'What an invite link invites to (sign-up and login pages); 400 unknown, 410 expired',
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: InviteTokenDto },
      },
    },
    async (req) => tokens.verify(req.body.token),
  );

  // -- the vendor's view --
  app.post(
    `${T}/v1`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          "Create an invite link for an account (owned by userId when given; default lifetime: the invitation strategy's)",
        body: Type.Object({
          tenantId: Type.String({ minLength: 1, maxLength: 255 }),
          userId: Type.Optional(Type.String({ maxLength: 64 })),
          expiresInMinutes: Type.Optional(Minutes),
          shouldSendEmail: Type.Optional(Type.Boolean()),
          roleIds: Type.Optional(RoleIds),
        }),
        response: { 201: InviteTokenDto },
      },
    },
    async (req, reply) => reply.status(201).send(await tokens.create(req.body)),
  );

  app.get(
    `${T}/v1/all`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Every invite link (of the account in the tenant header, when given)',
        response: { 200: Type.Array(InviteTokenDto) },
      },
    },
    async (req) => tokens.all(tenantHeader(req)),
  );

  app.delete(
    `${T}/v1/token/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete an invite link',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => (await tokens.remove(req.params.id), {}),
  );

  // -- invitation states and resending --
  app.get(
    '/identity/resources/tenants/users/v1/statuses',
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary:
          "Users' status per account: PendingInvitation, PendingLogin, Activated, NotActivated (user token: its account only)",
        querystring: Type.Object({
          userIds: Type.Array(Type.String({ maxLength: 2000 }), { minItems: 1, maxItems: 200 }),
          userTenantStatuses: Type.Optional(
            Type.Array(Type.Union(STATUSES.map((s) => Type.Literal(s))), { maxItems: 4 }),
          ),
        }),
        response: {
          200: Type.Array(
            Type.Object({
              userId: Type.String(),
              tenantsStatuses: Type.Array(Type.Object({ tenantId: Type.String(), status: Type.String() })),
            }),
          ),
        },
      },
    },
    async (req) => {
      const ids = req.query.userIds
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean);
      const wanted = new Set<UserTenantStatus>(req.query.userTenantStatuses ?? STATUSES);
      const rows = await userTenantStatuses(
        deps.db,
        ids,
        req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req),
      );
      const byUser = new Map<string, { tenantId: string; status: string }[]>();
      for (const r of rows)
        if (wanted.has(r.status))
          byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), { tenantId: r.tenant_id, status: r.status }]);
      return [...byUser].map(([userId, tenantsStatuses]) => ({ userId, tenantsStatuses }));
    },
  );

  app.post(
    '/identity/resources/users/v1/invitation/reset/all',
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary:
          'Send every pending invitation of the email again with fresh links/codes (environment token: all accounts; user token: its account)',
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) }),
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => {
      await deps.invitations.resendAll(
        req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req),
        req.body.email,
        clientOf(req),
      );
      return {};
    },
  );

  app.post(
    '/team/resources/members/v1/:userId/resendActivationEmail',
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary:
          'Send a member their invitation (pending) or activation email (signed up, not activated) again; 409 when already active',
        params: Type.Object({ userId: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => {
      await deps.invitations.resendActivation(accountOf(req), req.params.userId, clientOf(req), deps.resendActivation);
      return {};
    },
  );
};
