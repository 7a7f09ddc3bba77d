import { Type, type Static } from 'typebox';
import { EMAIL_TEMPLATE_TYPES, SMS_TEMPLATE_TYPES } from './templates.ts';

const Str = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

export const MailConfigBody = Type.Object({
  provider: Type.Optional(Str(32, 'only "smtp" is supported (default)')),
  host: Type.Optional(Str(255, 'SMTP server host')),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'default 465 when secure, else 587' })),
  secure: Type.Optional(
    Type.Boolean({ description: 'implicit TLS (port 465); otherwise STARTTLS when the server offers it' }),
  ),
  username: Type.Optional(Str(255)),
  password: Type.Optional(
    Str(1024, 'sealed with the key-encryption key; never answered; left out on update keeps the stored one'),
  ),
  secret: Type.Optional(Str(1024, 'alias of password')),
  senderEmail: Type.Optional(Str(320, 'the From address')),
  fromName: Type.Optional(Str(255, 'the From display name')),
});
export type MailConfigBody = Static<typeof MailConfigBody>;

/** Email configuration v2 (routes.md "Email Configuration"): an API provider, flat or wrapped in `payload` (checked by the service, naming the field). */
const MailV2Fields = {
  provider: Type.Optional(Str(32, 'sendgrid, mailgun (ses, ses-role: not supported by this build)')),
  secret: Type.Optional(
    Str(1024, "the provider's API key (ses: secret access key; ses-role: role ARN); sealed, never answered"),
  ),
  id: Type.Optional(Str(255, 'ses: access key id')),
  domain: Type.Optional(Str(255, 'mailgun: the sending domain')),
  region: Type.Optional(Str(32, 'mailgun: us or eu (default us); ses: the AWS region')),
  senderEmail: Type.Optional(
    Str(320, 'Gatehouse addition: the From address when the template names none (mailgun default: no-reply@<domain>)'),
  ),
  fromName: Type.Optional(Str(255, 'Gatehouse addition: the From display name')),
  baseUrl: Type.Optional(Str(2048, "Gatehouse addition: API base URL override (default: the provider's, per region)")),
};
const MailConfigV2 = Type.Object(MailV2Fields);
export type MailConfigV2 = Static<typeof MailConfigV2>;
export const MailConfigV2Body = Type.Object({ payload: Type.Optional(MailConfigV2), ...MailV2Fields });
export type MailConfigV2Body = Static<typeof MailConfigV2Body>;

export const MailConfigOut = Type.Object({
  provider: Type.String(),
  host: Type.String(),
  port: Type.Integer(),
  secure: Type.Boolean(),
  username: Type.String(),
  senderEmail: Type.String(),
  fromName: Type.String(),
  hasPassword: Type.Boolean(),
  domain: Type.Optional(Type.String({ description: 'mailgun: the sending domain' })),
  region: Type.Optional(Type.String({ description: 'mailgun: us or eu' })),
  baseUrl: Type.Optional(Type.String({ description: 'API providers: the base URL in use when overridden' })),
  extension: Type.Array(Type.Unknown()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type MailConfigOut = Static<typeof MailConfigOut>;

export const SmsConfigBody = Type.Object({
  provider: Type.Optional(Str(32, 'only "twilio" is supported (default)')),
  accountId: Type.Optional(Str(255, 'Twilio AccountSid')),
  token: Type.Optional(Str(1024, 'Twilio auth token; sealed, never answered; left out on update keeps the stored one')),
  serviceId: Type.Optional(Str(255, 'Twilio MessagingServiceSid; used instead of senderName when set')),
  senderName: Type.Optional(Str(64, 'sender phone number or alphanumeric sender id (From)')),
  channel: Type.Optional(Str(16, 'only "sms"')),
  baseUrl: Type.Optional(Str(2048, 'provider API base URL, default https://api.twilio.com')),
});
export type SmsConfigBody = Static<typeof SmsConfigBody>;

export const SmsConfigOut = Type.Object({
  provider: Type.String(),
  accountId: Type.String(),
  serviceId: Type.String(),
  senderName: Type.String(),
  channel: Type.String(),
  baseUrl: Type.String(),
  hasToken: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type SmsConfigOut = Static<typeof SmsConfigOut>;

export const EmailType = Type.Union(EMAIL_TEMPLATE_TYPES.map((t) => Type.Literal(t)));
export const SmsType = Type.Union(SMS_TEMPLATE_TYPES.map((t) => Type.Literal(t)));

export const EmailTemplateBody = Type.Object({
  type: Type.String({ maxLength: 64, description: EMAIL_TEMPLATE_TYPES.join(', ') }),
  htmlTemplate: Type.Optional(
    Str(200_000, 'HTML with {{var}} placeholders (values are HTML-escaped) and {{#var}}...{{/var}} sections'),
  ),
  subject: Type.Optional(Str(998)),
  senderEmail: Type.Optional(Str(320)),
  fromName: Type.Optional(Str(255)),
  redirectURL: Type.Optional(Str(2048, 'where {{link}} points; the flow appends its query parameters')),
  successRedirectUrl: Type.Optional(Str(2048)),
  redirectURLPattern: Type.Optional(Str(2048)),
  successRedirectUrlPattern: Type.Optional(Str(2048)),
  active: Type.Optional(
    Type.Boolean({ description: 'false: messages of this type are not sent (recorded as skipped)' }),
  ),
});
export type EmailTemplateBody = Static<typeof EmailTemplateBody>;

export const EmailTemplate = Type.Object({
  id: Type.Optional(Type.String()),
  type: Type.String(),
  htmlTemplate: Type.String(),
  subject: Type.String(),
  senderEmail: Type.String(),
  fromName: Type.String(),
  redirectURL: Type.String(),
  successRedirectUrl: Type.String(),
  redirectURLPattern: Type.String(),
  successRedirectUrlPattern: Type.String(),
  active: Type.Boolean(),
  createdAt: Type.Optional(Type.String()),
  updatedAt: Type.Optional(Type.String()),
});
export type EmailTemplate = Static<typeof EmailTemplate>;

export const SmsTemplateBody = Type.Object({
  body: Type.Optional(Str(1600, 'text with {{var}} placeholders, e.g. {{code}}')),
  active: Type.Optional(Type.Boolean()),
});

export const SmsTemplate = Type.Object({
  type: Type.String(),
  body: Type.String(),
  active: Type.Boolean(),
  isDefault: Type.Boolean(),
});
export type SmsTemplate = Static<typeof SmsTemplate>;

export const Delivery = Type.Object({
  id: Type.String(),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  channel: Type.String(),
  type: Type.String(),
  to: Type.String(),
  status: Type.String({ description: 'queued, retrying, sent, dev-outbox, failed, skipped' }),
  provider: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer(),
  lastError: Type.Union([Type.String(), Type.Null()]),
  providerMessageId: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  sentAt: Type.Union([Type.String(), Type.Null()]),
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryQuery = Type.Object({
  status: Type.Optional(
    Type.Union(['queued', 'retrying', 'sent', 'dev-outbox', 'failed', 'skipped'].map((s) => Type.Literal(s))),
  ),
  channel: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('sms')])),
  type: Type.Optional(Str(64)),
  to: Type.Optional(Str(320)),
  tenantId: Type.Optional(Str(255)),
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, default: 0, description: 'page index, 0-based' })),
});

export const OutboxMessage = Type.Object({
  id: Type.String(),
  deliveryId: Type.String(),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  channel: Type.String(),
  type: Type.String(),
  to: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  html: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});
export type OutboxMessage = Static<typeof OutboxMessage>;
