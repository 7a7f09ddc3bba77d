import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { PhoneNumberOut, PhonesService } from './phones.service.ts';
import { CodeBody, CodeFields, DeleteAnswer, PHONE, PhoneNumber } from './phones.schema.ts';

/**
 * The older names of the phone-number operations (routes.md, "also called by existing browser clients"), mapped
 * onto the phones service of `phones.routes.ts`: adding a number with a texted code, setting one without a code,
 * and resetting (removing) a verified number with the ResetPhoneNumber code texted to it. User token (the token's
 * user), or an environment token with the gatehouse-user-id header.
 */
const U = '/identity/resources/users/v1/phone';
const tags = ['phone numbers'];
const CodeSent = Type.Object({ otcToken: Type.String(), phoneNumber: Type.String(), id: Type.Optional(Type.String()) });

export const userPhoneRoutes: FastifyPluginAsyncTypebox<{
  phones: PhonesService;
  actingUser: (req: FastifyRequest) => string;
}> = async (app, { phones, actingUser }) => {
  /** The user's number `phone`, by its number (404 PHONE_NOT_FOUND when the user has no such number). */
  const numberOf = async (userId: string, phone: string) => {
    const row = (await phones.mine(userId)).find((p) => p.phoneNumber === phone);
    if (!row)
      throw new AppError('PHONE_NOT_FOUND', `The user has no phone number ${phone}`, { fields: ['phoneNumber'] });
    return row;
  };

  app.post(
    U,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          'Add a phone number: texts a verification code to it (answers the otcToken); phone-numbers/v1/verify {otcToken, code} adds it verified',
        body: Type.Object({ phoneNumber: PHONE }),
        response: { 201: CodeSent },
      },
    },
    async (req, reply) =>
      reply.status(201).send(
        (await phones.preverify(actingUser(req), req.body.phoneNumber, req.ip)) as {
          otcToken: string;
          phoneNumber: string;
          id?: string;
        },
      ),
  );

  app.post(
    `${U}/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          'Prove the number added by POST phone with the texted code: it is added verified (as phone-numbers/v1/verify)',
        body: CodeBody,
        response: { 200: PhoneNumber },
      },
    },
    async (req) => (await phones.verify(actingUser(req), req.body.otcToken, req.body.code)) as PhoneNumberOut,
  );

  app.put(
    `${U}/change`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          'Set a phone number without a code: added unverified (prove it later with preverify and verify); the number itself when the user has it already',
        body: Type.Object({ phoneNumber: PHONE }),
        response: { 200: PhoneNumber },
      },
    },
    async (req) => (await phones.add(actingUser(req), req.body.phoneNumber, false, req.ip)) as PhoneNumberOut,
  );

  app.post(
    `${U}/reset`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary:
          "Reset (remove) one of the user's numbers: a verified one gets the ResetPhoneNumber code texted to it (answers otcToken); an unverified one goes at once",
        body: Type.Object({ phoneNumber: PHONE }),
        response: { 200: DeleteAnswer },
      },
    },
    async (req) => {
      const userId = actingUser(req);
      return phones.requestDelete(userId, (await numberOf(userId, req.body.phoneNumber)).id, req.ip);
    },
  );

  app.post(
    `${U}/reset/verify`,
    {
      config: guard.identity(),
      schema: {
        tags,
        summary: 'Remove the verified number with the texted code (otcToken from phone/reset)',
        body: Type.Object({ phoneNumber: PHONE, ...CodeFields }),
        response: { 200: Type.Object({}) },
      },
    },
    async (req) => {
      const userId = actingUser(req);
      await phones.verifyDelete(
        userId,
        (await numberOf(userId, req.body.phoneNumber)).id,
        req.body.otcToken,
        req.body.code,
      );
      return {};
    },
  );
};
