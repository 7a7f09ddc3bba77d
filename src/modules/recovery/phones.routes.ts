import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { pageEnvelope } from '../../http/paging.ts';
import type { PhonesService } from './phones.service.ts';
import { CodeBody, DeleteAnswer, PHONE, PhoneNumber } from './phones.schema.ts';
import { userPhoneRoutes } from './user-phone.routes.ts';

const tags = ['phone numbers'];
const P = '/identity/resources/users/phone-numbers';
const Id = Type.String({ minLength: 1, maxLength: 64 });
const Links = Type.Object({ next: Type.String(), prev: Type.String(), first: Type.String(), last: Type.String() });
const Page = Type.Object({
  items: Type.Array(PhoneNumber),
  _links: Links,
  _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
});
const ListQuery = {
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: '0-based page index' }),
  ),
  _sortBy: Type.Optional(Type.Union([Type.Literal('userId'), Type.Literal('phoneNumber')], { default: 'phoneNumber' })),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
  _phoneNumber: Type.Optional(Type.String({ maxLength: 32, description: 'substring of the number' })),
};
const ListQueryV2 = Type.Object({
  ...ListQuery,
  userIds: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 })),
});
/** What adding or pre-verifying answers: the otcToken of the texted code, or the number when added without verification. */
const Created = Type.Object({
  otcToken: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  phoneNumber: Type.Optional(Type.String()),
  verified: Type.Optional(Type.Boolean()),
  createdAt: Type.Optional(Type.String()),
  updatedAt: Type.Optional(Type.String()),
});

/** The user a call acts on: the user token's own user, or the gatehouse-user-id header of an environment call. */
function actingUser(req: FastifyRequest): string {
  if (req.auth?.kind === 'user') return req.auth.userId;
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const v = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!v)
    throw new AppError(
      'VALIDATION',
      'Header gatehouse-user-id is required with an environment token (the user whose numbers these are)',
      { fields: ['gatehouse-user-id'] },
    );
  return v;
}

export const phoneNumbersRoutes: FastifyPluginAsyncTypebox<{ phones: PhonesService }> = async (app, { phones }) => {
  await app.register(userPhoneRoutes, { phones, actingUser });
  const list = async (req: FastifyRequest, q: Record<string, unknown> & { userIds?: string[] }, path: string) => {
    const limit = (q._limit as number | undefined) ?? 50;
    const page = (q._offset as number | undefined) ?? 0;
    const userIds = q.userIds
      ?.flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    const r = await phones.list({
      tenantId: req.auth?.kind === 'user' ? req.auth.tenantId : undefined,
      phoneNumber: q._phoneNumber as string | undefined,
      userIds,
      sortBy: (q._sortBy as 'userId' | 'phoneNumber' | undefined) ?? 'phoneNumber',
      order: (q._order as 'ASC' | 'DESC' | undefined) ?? 'ASC',
      limit,
      offset: page * limit,
    });
    return pageEnvelope(r.items, { total: r.total, limit, page, path, query: q });
  };

  app.get(
    `${P}/v1`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: 'All phone numbers (environment token: every user; user token: the users of its account)',
        querystring: Type.Object(ListQuery),
        response: { 200: Page },
      },
    },
    async (req) => list(req, req.query, `${P}/v1`),
  );

  app.get(
    `${P}/v2`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: 'All phone numbers, optionally of some users (userIds)',
        querystring: ListQueryV2,
        response: { 200: Page },
      },
    },
    async (req) => list(req, req.query, `${P}/v2`),
  );

  app.get(
    `${P}/v1/me`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: "The current user's phone numbers (environment token: the gatehouse-user-id header)",
        response: { 200: Type.Array(PhoneNumber) },
      },
    },
    async (req) => phones.mine(actingUser(req)),
  );

  app.post(
    `${P}/v1`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          'Set a phone number for the user: with verify (default) a code is texted and /verify adds it verified; verify:false adds it unverified',
        body: Type.Object({ phoneNumber: PHONE, verify: Type.Optional(Type.Boolean()) }),
        response: { 201: Created },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await phones.add(actingUser(req), req.body.phoneNumber, req.body.verify !== false, req.ip)),
  );

  app.post(
    `${P}/v1/preverify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Text a verification code to a number (new, or held unverified by the user); answers the otcToken',
        body: Type.Object({ phoneNumber: PHONE }),
        response: { 200: Created },
      },
    },
    async (req) => phones.preverify(actingUser(req), req.body.phoneNumber, req.ip),
  );

  app.post(
    `${P}/v1/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Prove a number with the texted code (otcToken + code): adds it verified or marks it verified',
        body: CodeBody,
        response: { 200: PhoneNumber },
      },
    },
    async (req) => phones.verify(actingUser(req), req.body.otcToken, req.body.code),
  );

  app.delete(
    `${P}/v1/:id`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          "Remove one of the user's numbers: a verified number needs the code texted to it (answers otcToken); an unverified one goes at once",
        params: Type.Object({ id: Id }),
        response: { 200: DeleteAnswer },
      },
    },
    async (req) => phones.requestDelete(actingUser(req), req.params.id, req.ip),
  );

  app.post(
    `${P}/v1/:id/delete/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove a verified number with the texted code',
        params: Type.Object({ id: Id }),
        body: CodeBody,
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => (await phones.verifyDelete(actingUser(req), req.params.id, req.body.otcToken, req.body.code), {}),
  );

  app.post(
    `${P}/v1/vendor/:userId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Add a phone number to a user, verified by default (no code)',
        params: Type.Object({ userId: Id }),
        body: Type.Object({ phoneNumber: PHONE }),
        response: { 201: PhoneNumber },
      },
    },
    async (req, reply) => reply.status(201).send(await phones.vendorAdd(req.params.userId, req.body.phoneNumber)),
  );

  app.delete(
    `${P}/v1/vendor/:userId/:phoneId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Remove a user's phone number (no code)",
        params: Type.Object({ userId: Id, phoneId: Id }),
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => (await phones.vendorDelete(req.params.userId, req.params.phoneId), {}),
  );
};
