import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type {
  EmailTemplate,
  MailConfigBody,
  MailConfigOut,
  MailConfigV2,
  MailConfigV2Body,
  SmsConfigBody,
  SmsConfigOut,
  SmsTemplate,
  EmailTemplateBody,
} from './schema.ts';
import * as store from './store.ts';
import {
  DEFAULT_EMAIL_TEMPLATES,
  DEFAULT_SMS_TEMPLATES,
  defaultLinkPath,
  isEmailType,
  isSmsType,
  EMAIL_TEMPLATE_TYPES,
  SMS_TEMPLATE_TYPES,
  type EmailTemplateType,
  type SmsTemplateType,
} from './templates.ts';

export interface ConfigDeps {
  db: Db;
  kek: Buffer;
  publicUrl: string;
}

const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;
const HOST = /^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

function httpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname && !u.username && !u.password;
  } catch {
    return false;
  }
}

function fail(problems: string[], fields: string[]): never {
  throw new AppError('VALIDATION', problems.join('; '), { fields });
}

const iso = (d: Date) => d.toISOString();

export function mailConfigOut(r: store.MailConfigRow): MailConfigOut {
  return {
    provider: r.provider,
    host: r.host ?? '',
    port: r.port ?? 0,
    secure: r.secure,
    username: r.username ?? '',
    senderEmail: r.sender_email,
    fromName: r.from_name,
    hasPassword: r.password_enc !== null,
    extension: [],
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    ...(r.domain ? { domain: r.domain } : {}),
    ...(r.region ? { region: r.region } : {}),
    ...(r.base_url ? { baseUrl: r.base_url } : {}),
  };
}

export function smsConfigOut(r: store.SmsConfigRow): SmsConfigOut {
  return {
    provider: r.provider,
    accountId: r.account_id,
    serviceId: r.service_id ?? '',
    senderName: r.sender_name ?? '',
    channel: r.channel,
    baseUrl: r.base_url ?? '',
    hasToken: true,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export type MessagingConfigService = ReturnType<typeof createMessagingConfigService>;

/** Email and SMS provider configuration and templates of the environment (vendor routes). */
export function createMessagingConfigService(deps: ConfigDeps) {
  const { db, kek } = deps;

  function templateOut(r: store.EmailTemplateRow): EmailTemplate {
    return {
      id: r.id,
      type: r.type,
      subject: r.subject,
      htmlTemplate: r.html_template,
      senderEmail: r.sender_email ?? '',
      fromName: r.from_name ?? '',
      redirectURL: r.redirect_url ?? '',
      successRedirectUrl: r.success_redirect_url ?? '',
      redirectURLPattern: r.redirect_url_pattern ?? '',
      successRedirectUrlPattern: r.success_redirect_url_pattern ?? '',
      active: r.active,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    };
  }

  function defaultTemplate(type: EmailTemplateType): EmailTemplate {
    const d = DEFAULT_EMAIL_TEMPLATES[type];
    return {
      type,
      subject: d.subject,
      htmlTemplate: d.html,
      senderEmail: '',
      fromName: '',
      redirectURL: deps.publicUrl + defaultLinkPath(type),
      successRedirectUrl: '',
      redirectURLPattern: '',
      successRedirectUrlPattern: '',
      active: true,
    };
  }

  const emailType = (t: string, field = 'type'): EmailTemplateType => {
    if (!isEmailType(t)) fail([`${field} must be one of ${EMAIL_TEMPLATE_TYPES.join(', ')}`], [field]);
    return t;
  };
  const smsType = (t: string, field = 'type'): SmsTemplateType => {
    if (!isSmsType(t)) fail([`${field} must be one of ${SMS_TEMPLATE_TYPES.join(', ')}`], [field]);
    return t;
  };

  return {
    async getMail(): Promise<MailConfigOut> {
      const r = await store.getMailConfig(db);
      if (!r) throw new AppError('MAIL_CONFIG_NOT_FOUND');
      return mailConfigOut(r);
    },

    /** Create or replace; a password left out keeps the stored one. */
    async putMail(b: MailConfigBody): Promise<{ config: MailConfigOut; created: boolean }> {
      const problems: string[] = [];
      const fields: string[] = [];
      const bad = (f: string, rule: string) => (problems.push(`${f} ${rule}`), fields.push(f));
      const provider = b.provider ?? 'smtp';
      if (provider !== 'smtp')
        bad('provider', `must be "smtp" (got "${provider}"); other email providers are not supported`);
      const host = b.host?.trim() ?? '';
      if (!host) bad('host', 'is required: the SMTP server host name');
      else if (!HOST.test(host)) bad('host', 'must be a host name or IP address');
      const secure = b.secure ?? b.port === 465;
      const port = b.port ?? (secure ? 465 : 587);
      const senderEmail = b.senderEmail?.trim() ?? '';
      if (!EMAIL.test(senderEmail)) bad('senderEmail', 'is required and must be an email address');
      const fromName = (b.fromName ?? '').trim();
      if (CONTROL.test(fromName)) bad('fromName', 'must not contain control characters');
      const password = b.password ?? b.secret;
      if (b.password !== undefined && b.secret !== undefined && b.password !== b.secret)
        bad('password', 'and secret disagree; send one of them');
      if (problems.length) fail(problems, fields);
      return db.transaction(async (tx) => {
        const old = await store.getMailConfig(tx);
        const username = b.username?.trim() || null;
        const passwordEnc =
          password !== undefined && password !== ''
            ? encrypt(kek, password)
            : password === ''
              ? null
              : (old?.password_enc ?? null);
        const { row, created } = await store.putMailConfig(tx, {
          provider,
          host,
          port,
          secure,
          username,
          password_enc: passwordEnc,
          sender_email: senderEmail,
          from_name: fromName,
        });
        return { config: mailConfigOut(row), created };
      });
    },

    /**
     * Email configuration v2: SendGrid (v3 Mail Send API) or Mailgun (messages API, US/EU region). Replaces any SMTP
     * configuration. SES (`ses`, `ses-role`) needs AWS request signing, which this build does not carry: 400.
     */
    async putMailV2(body: MailConfigV2Body): Promise<{ config: MailConfigOut; created: boolean }> {
      const b: MailConfigV2 = body.payload ?? body;
      const f = (name: string) => (body.payload ? `payload.${name}` : name);
      if (b.provider !== 'sendgrid' && b.provider !== 'mailgun' && b.provider !== 'ses' && b.provider !== 'ses-role') {
        fail(
          [
            `${f('provider')} must be one of sendgrid, mailgun, ses, ses-role${b.provider === 'smtp' ? ' (SMTP: POST /identity/resources/mail/v1/configurations)' : ''}`,
          ],
          [f('provider')],
        );
      }
      if (b.provider === 'ses' || b.provider === 'ses-role') {
        throw new AppError(
          'EMAIL_PROVIDER_UNSUPPORTED',
          `provider "${b.provider}" (Amazon SES) is not supported by this build (it needs the AWS SDK); use "sendgrid", "mailgun" or SMTP (POST /identity/resources/mail/v1/configurations)`,
          { fields: [f('provider')] },
        );
      }
      const problems: string[] = [];
      const fields: string[] = [];
      const bad = (name: string, rule: string) => (problems.push(`${f(name)} ${rule}`), fields.push(f(name)));
      const secret = b.secret?.trim() ?? '';
      if (!secret) bad('secret', "is required: the provider's API key");
      const senderEmail = b.senderEmail?.trim() ?? '';
      if (senderEmail && !EMAIL.test(senderEmail)) bad('senderEmail', 'must be an email address');
      const fromName = (b.fromName ?? '').trim();
      if (CONTROL.test(fromName)) bad('fromName', 'must not contain control characters');
      const baseUrl = b.baseUrl?.trim() || null;
      if (baseUrl && !httpUrl(baseUrl)) bad('baseUrl', 'must be an absolute http(s) URL without credentials');
      let domain: string | null = null;
      let region: string | null = null;
      if (b.provider === 'mailgun') {
        domain = b.domain?.trim().toLowerCase() ?? '';
        if (!domain) bad('domain', 'is required for mailgun: the sending domain');
        else if (!/^[a-z0-9.-]+\.[a-z]{2,}$/.test(domain)) bad('domain', 'must be a domain name');
        region = (b.region ?? 'us').trim().toLowerCase();
        if (region !== 'us' && region !== 'eu') bad('region', 'must be "us" or "eu" for mailgun');
      }
      if (problems.length) fail(problems, fields);
      const provider = b.provider;
      return db.transaction(async (tx) => {
        const { row, created } = await store.putMailConfig(tx, {
          provider,
          host: null,
          port: null,
          secure: true,
          username: null,
          password_enc: encrypt(kek, secret),
          sender_email: senderEmail,
          from_name: fromName,
          domain,
          region,
          base_url: baseUrl,
        });
        return { config: mailConfigOut(row), created };
      });
    },

    async deleteMail(): Promise<void> {
      await store.deleteMailConfig(db);
    },

    async getSms(): Promise<SmsConfigOut> {
      const r = await store.getSmsConfig(db);
      if (!r) throw new AppError('SMS_CONFIG_NOT_FOUND');
      return smsConfigOut(r);
    },

    async putSms(b: SmsConfigBody): Promise<{ config: SmsConfigOut; created: boolean }> {
      const problems: string[] = [];
      const fields: string[] = [];
      const bad = (f: string, rule: string) => (problems.push(`${f} ${rule}`), fields.push(f));
      const provider = (b.provider ?? 'twilio').toLowerCase();
      if (provider !== 'twilio') bad('provider', `must be "twilio" (got "${b.provider}")`);
      const channel = b.channel ?? 'sms';
      if (channel !== 'sms') bad('channel', 'must be "sms"');
      const accountId = b.accountId?.trim() ?? '';
      if (!accountId) bad('accountId', "is required: the provider's account id (Twilio AccountSid)");
      const serviceId = b.serviceId?.trim() || null;
      const senderName = b.senderName?.trim() || null;
      if (!serviceId && !senderName)
        bad('senderName', 'or serviceId is required: a sender number/name or a messaging service id');
      const baseUrl = b.baseUrl?.trim() || null;
      if (baseUrl && !httpUrl(baseUrl)) bad('baseUrl', 'must be an absolute http(s) URL without credentials');
      return db.transaction(async (tx) => {
        const old = await store.getSmsConfig(tx);
        const token = b.token;
        if ((token === undefined || token === '') && !old) bad('token', "is required: the provider's auth token");
        if (problems.length) fail(problems, fields);
        const tokenEnc = token ? encrypt(kek, token) : old!.token_enc;
        const { row, created } = await store.putSmsConfig(tx, {
          provider,
          account_id: accountId,
          token_enc: tokenEnc,
          service_id: serviceId,
          sender_name: senderName,
          channel,
          base_url: baseUrl,
        });
        return { config: smsConfigOut(row), created };
      });
    },

    async deleteSms(): Promise<void> {
      await store.deleteSmsConfig(db);
    },

    // -- email templates --

    async listEmailTemplates(type?: string): Promise<EmailTemplate[]> {
      if (type !== undefined) emailType(type);
      return (await store.emailTemplates(db, type)).map(templateOut);
    },

    defaultEmailTemplate(type: string): EmailTemplate {
      return defaultTemplate(emailType(type));
    },

    /** Add or update the template of a type; fields left out keep the stored value, else the built-in default's. */
    async putEmailTemplate(b: EmailTemplateBody): Promise<EmailTemplate> {
      const type = emailType(b.type);
      const problems: string[] = [];
      const fields: string[] = [];
      const bad = (f: string, rule: string) => (problems.push(`${f} ${rule}`), fields.push(f));
      if (b.senderEmail && !EMAIL.test(b.senderEmail.trim())) bad('senderEmail', 'must be an email address');
      for (const f of ['redirectURL', 'successRedirectUrl'] as const)
        if (b[f] && !httpUrl(b[f]!.trim())) bad(f, 'must be an absolute http(s) URL');
      if (b.subject !== undefined && !b.subject.trim()) bad('subject', 'must not be empty');
      if (b.htmlTemplate !== undefined && !b.htmlTemplate.trim()) bad('htmlTemplate', 'must not be empty');
      if (b.fromName && CONTROL.test(b.fromName)) bad('fromName', 'must not contain control characters');
      if (problems.length) fail(problems, fields);
      return db.transaction(async (tx) => {
        const old = await store.emailTemplate(tx, type);
        const d = DEFAULT_EMAIL_TEMPLATES[type];
        const pick = (v: string | undefined, prev: string | null | undefined): string | null =>
          v === undefined ? (prev ?? null) : v.trim() || null;
        const row = await store.putEmailTemplate(tx, {
          id: old?.id ?? newId(),
          type,
          subject: b.subject?.trim() ?? old?.subject ?? d.subject,
          html_template: b.htmlTemplate ?? old?.html_template ?? d.html,
          sender_email: pick(b.senderEmail, old?.sender_email),
          from_name: pick(b.fromName, old?.from_name),
          redirect_url: pick(b.redirectURL, old?.redirect_url),
          success_redirect_url: pick(b.successRedirectUrl, old?.success_redirect_url),
          redirect_url_pattern: pick(b.redirectURLPattern, old?.redirect_url_pattern),
          success_redirect_url_pattern: pick(b.successRedirectUrlPattern, old?.success_redirect_url_pattern),
          active: b.active ?? old?.active ?? true,
        });
        return templateOut(row);
      });
    },

    async deleteEmailTemplate(id: string): Promise<void> {
      if (!/^[0-9a-f-]{36}$/i.test(id) || !(await store.deleteEmailTemplate(db, id)))
        throw new AppError('TEMPLATE_NOT_FOUND', `No email template with id ${id}`);
    },

    // -- SMS templates --

    async listSmsTemplates(): Promise<SmsTemplate[]> {
      return (await store.smsTemplates(db)).map((r) => ({
        type: r.type,
        body: r.body,
        active: r.active,
        isDefault: false,
      }));
    },

    async getSmsTemplate(type: string): Promise<SmsTemplate> {
      const r = await store.smsTemplate(db, smsType(type));
      if (!r)
        throw new AppError(
          'TEMPLATE_NOT_FOUND',
          `No stored SMS template of type ${type}; GET .../${type}/default answers the built-in one`,
        );
      return { type: r.type, body: r.body, active: r.active, isDefault: false };
    },

    defaultSmsTemplate(type: string): SmsTemplate {
      const t = smsType(type);
      return { type: t, body: DEFAULT_SMS_TEMPLATES[t], active: true, isDefault: true };
    },

    allDefaultSmsTemplates(): SmsTemplate[] {
      return SMS_TEMPLATE_TYPES.map((t) => ({
        type: t,
        body: DEFAULT_SMS_TEMPLATES[t],
        active: true,
        isDefault: true,
      }));
    },

    async putSmsTemplate(
      type: string,
      b: { body?: string; active?: boolean },
    ): Promise<{ template: SmsTemplate; created: boolean }> {
      const t = smsType(type);
      if (b.body !== undefined && !b.body.trim()) fail(['body must not be empty'], ['body']);
      return db.transaction(async (tx) => {
        const old = await store.smsTemplate(tx, t);
        const { row, created } = await store.putSmsTemplate(tx, {
          type: t,
          body: b.body ?? old?.body ?? DEFAULT_SMS_TEMPLATES[t],
          active: b.active ?? old?.active ?? true,
        });
        return { template: { type: row.type, body: row.body, active: row.active, isDefault: false }, created };
      });
    },

    async deleteSmsTemplate(type: string): Promise<void> {
      if (!(await store.deleteSmsTemplate(db, smsType(type))))
        throw new AppError('TEMPLATE_NOT_FOUND', `No stored SMS template of type ${type}`);
    },

    /** For delivery: the SMTP password or SMS token, unsealed. */
    unseal(sealed: string): string {
      return decrypt(kek, sealed);
    },
  };
}

export type { Queryable };
