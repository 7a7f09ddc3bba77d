import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import {
  Delivery,
  DeliveryQuery,
  EmailTemplate,
  EmailTemplateBody,
  MailConfigBody,
  MailConfigOut,
  MailConfigV2Body,
  OutboxMessage,
  SmsConfigBody,
  SmsConfigOut,
  SmsTemplate,
  SmsTemplateBody,
} from './schema.ts';
import type { MessagingService } from './service.ts';

const MAIL = '/identity/resources/mail/v1';
const SMS = '/identity/resources/configurations/v1/sms';
const MSG = '/identity/resources/messaging/v1';
const Ok = Type.Object({});

export const messagingRoutes: FastifyPluginAsyncTypebox<{ messaging: MessagingService }> = async (
  app,
  { messaging },
) => {
  const cfg = messaging.config;

  // -- email configuration (wire.md section 9) --
  app.post(
    `${MAIL}/configurations`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email configuration'],
        summary: 'Create (201) or replace (200) the SMTP configuration; the password is sealed and never answered',
        body: MailConfigBody,
        response: { 200: MailConfigOut, 201: MailConfigOut },
      },
    },
    async (req, reply) => {
      const { config, created } = await cfg.putMail(req.body);
      return reply.code(created ? 201 : 200).send(config);
    },
  );
  app.get(
    `${MAIL}/configurations`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email configuration'],
        summary: 'Get the SMTP configuration (without the password); 404 when none',
        response: { 200: MailConfigOut },
      },
    },
    async () => cfg.getMail(),
  );
  app.delete(
    `${MAIL}/configurations`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email configuration'],
        summary: 'Delete the SMTP configuration (messages then go to the development outbox, or fail in production)',
        response: { 200: Ok },
      },
    },
    async () => (await cfg.deleteMail(), {}),
  );

  app.post(
    '/identity/resources/mail/v2/configurations',
    {
      config: guard.vendor,
      schema: {
        tags: ['email configuration'],
        summary:
          'Configure an email API provider: sendgrid (v3 Mail Send) or mailgun (US/EU); replaces the SMTP configuration. ses/ses-role: 400 in this build',
        body: MailConfigV2Body,
        response: { 201: MailConfigOut },
      },
    },
    async (req, reply) => reply.code(201).send((await cfg.putMailV2(req.body)).config),
  );

  // -- email templates --
  app.post(
    `${MAIL}/configs/templates`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email templates'],
        summary: 'Add or update the template of a type; fields left out keep their value (else the default)',
        body: EmailTemplateBody,
        response: { 201: EmailTemplate },
      },
    },
    async (req, reply) => reply.code(201).send(await cfg.putEmailTemplate(req.body)),
  );
  app.get(
    `${MAIL}/configs/templates`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email templates'],
        summary: 'List the stored templates (optionally of one type); types without one use the built-in default',
        querystring: Type.Object({ type: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { 200: Type.Array(EmailTemplate) },
      },
    },
    async (req) => cfg.listEmailTemplates(req.query.type),
  );
  app.delete(
    `${MAIL}/configs/templates/:templateId`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email templates'],
        summary: 'Delete a stored template (its type goes back to the built-in default)',
        params: Type.Object({ templateId: Type.String({ maxLength: 64 }) }),
        response: { 200: Ok },
      },
    },
    async (req) => (await cfg.deleteEmailTemplate(req.params.templateId), {}),
  );
  app.get(
    `${MAIL}/configs/:type/default`,
    {
      config: guard.vendor,
      schema: {
        tags: ['email templates'],
        summary: 'Get the built-in default template of a type',
        params: Type.Object({ type: Type.String({ maxLength: 64 }) }),
        response: { 200: EmailTemplate },
      },
    },
    async (req) => cfg.defaultEmailTemplate(req.params.type),
  );

  // -- SMS configuration (wire.md section 9) --
  app.post(
    SMS,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms configuration'],
        summary:
          "Create (201) or replace (200) the SMS provider configuration (Twilio's REST API; baseUrl overridable)",
        body: SmsConfigBody,
        response: { 200: SmsConfigOut, 201: SmsConfigOut },
      },
    },
    async (req, reply) => {
      const { config, created } = await cfg.putSms(req.body);
      return reply.code(created ? 201 : 200).send(config);
    },
  );
  app.get(
    SMS,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms configuration'],
        summary: 'Get the SMS provider configuration (without the token); 404 when none',
        response: { 200: SmsConfigOut },
      },
    },
    async () => cfg.getSms(),
  );
  app.delete(
    SMS,
    {
      config: guard.vendor,
      schema: { tags: ['sms configuration'], summary: 'Delete the SMS provider configuration', response: { 200: Ok } },
    },
    async () => (await cfg.deleteSms(), {}),
  );

  // -- SMS templates --
  const TypeParam = Type.Object({ type: Type.String({ maxLength: 64 }) });
  app.get(
    `${SMS}/templates`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'List the stored SMS templates',
        response: { 200: Type.Array(SmsTemplate) },
      },
    },
    async () => cfg.listSmsTemplates(),
  );
  app.get(
    `${SMS}/templates/default/all`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'Get the built-in default of every SMS type',
        response: { 200: Type.Array(SmsTemplate) },
      },
    },
    async () => cfg.allDefaultSmsTemplates(),
  );
  app.get(
    `${SMS}/templates/:type`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'Get the stored SMS template of a type; 404 when the type uses the default',
        params: TypeParam,
        response: { 200: SmsTemplate },
      },
    },
    async (req) => cfg.getSmsTemplate(req.params.type),
  );
  app.get(
    `${SMS}/templates/:type/default`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'Get the built-in default SMS template of a type',
        params: TypeParam,
        response: { 200: SmsTemplate },
      },
    },
    async (req) => cfg.defaultSmsTemplate(req.params.type),
  );
  app.post(
    `${SMS}/templates/:type`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'Create (201) or update (200) the SMS template of a type',
        params: TypeParam,
        body: SmsTemplateBody,
        response: { 200: SmsTemplate, 201: SmsTemplate },
      },
    },
    async (req, reply) => {
      const { template, created } = await cfg.putSmsTemplate(req.params.type, req.body ?? {});
      return reply.code(created ? 201 : 200).send(template);
    },
  );
  app.delete(
    `${SMS}/templates/:type`,
    {
      config: guard.vendor,
      schema: {
        tags: ['sms templates'],
        summary: 'Delete the stored SMS template of a type (back to the default)',
        params: TypeParam,
        response: { 200: Ok },
      },
    },
    async (req) => (await cfg.deleteSmsTemplate(req.params.type), {}),
  );

  // -- deliveries and the development outbox (Gatehouse additions) --
  app.get(
    `${MSG}/deliveries`,
    {
      config: guard.vendor,
      schema: {
        tags: ['messaging'],
        summary: 'List message deliveries, newest first: status, attempts and last error (no content)',
        querystring: DeliveryQuery,
        response: {
          200: Type.Object({
            items: Type.Array(Delivery),
            _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
          }),
        },
      },
    },
    async (req) => {
      const q = req.query;
      return messaging.listDeliveries(
        { status: q.status, channel: q.channel, type: q.type, recipient: q.to, tenantId: q.tenantId },
        q._limit ?? 50,
        q._offset ?? 0,
      );
    },
  );
  app.get(
    `${MSG}/deliveries/:id`,
    {
      config: guard.vendor,
      schema: {
        tags: ['messaging'],
        summary: 'Get one delivery',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: Delivery },
      },
    },
    async (req) => messaging.getDelivery(req.params.id),
  );
  app.post(
    `${MSG}/test`,
    {
      config: guard.vendor,
      schema: {
        tags: ['messaging'],
        summary:
          'Send a message of a template type to check the configuration; answers 202 with the delivery id to follow',
        body: Type.Object({
          channel: Type.Union([Type.Literal('email'), Type.Literal('sms')]),
          to: Type.String({ minLength: 1, maxLength: 320 }),
          type: Type.Optional(Type.String({ maxLength: 64, description: 'template type (default OTC)' })),
          vars: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2048 }))),
          tenantId: Type.Optional(Type.String({ maxLength: 255 })),
        }),
        response: { 202: Type.Object({ deliveryId: Type.String() }) },
      },
    },
    async (req, reply) => reply.code(202).send(await messaging.sendTest(req.body)),
  );
  app.addHook('onClose', async () => messaging.close());
  app.get(
    `${MSG}/dev-outbox`,
    {
      config: guard.vendor,
      schema: {
        tags: ['messaging'],
        summary:
          'Read the development outbox (messages sent while no provider is configured), newest first; 404 when it is off',
        querystring: DeliveryQuery,
        response: { 200: Type.Object({ items: Type.Array(OutboxMessage) }) },
      },
    },
    async (req) => {
      const q = req.query;
      return {
        items: await messaging.outbox(
          { channel: q.channel, type: q.type, recipient: q.to, tenantId: q.tenantId },
          q._limit ?? 50,
        ),
      };
    },
  );
  app.delete(
    `${MSG}/dev-outbox`,
    {
      config: guard.vendor,
      schema: {
        tags: ['messaging'],
        summary: 'Empty the development outbox',
        response: { 200: Type.Object({ deleted: Type.Integer() }) },
      },
    },
    async () => ({ deleted: await messaging.clearOutbox() }),
  );
};
