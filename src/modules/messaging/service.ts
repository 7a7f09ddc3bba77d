import type { Logger } from 'pino';
import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { JobHandler, JobRow, JobRunner } from '../../jobs/runner.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { createMessagingConfigService } from './config.service.ts';
import type { Delivery, OutboxMessage } from './schema.ts';
import * as store from './store.ts';
import {
  DEFAULT_EMAIL_TEMPLATES,
  DEFAULT_SMS_TEMPLATES,
  defaultLinkPath,
  escapeHtml,
  htmlToText,
  isEmailType,
  isSmsType,
  oneLine,
  render,
  EMAIL_TEMPLATE_TYPES,
  SMS_TEMPLATE_TYPES,
  type EmailTemplateType,
  type SmsTemplateType,
} from './templates.ts';
import { createSmtpSender, DeliveryError, sendTwilio } from './transports.ts';
import { MAILGUN_BASE_URLS, SENDGRID_BASE_URL, sendMailgun, sendSendgrid } from './providers.ts';

export const DELIVER_JOB = 'messaging.deliver';
export const TWILIO_BASE_URL = 'https://api.twilio.com';
const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;
const PHONE = /^\+[1-9]\d{6,14}$/;

export interface MessagingDeps {
  db: Db;
  kek: Buffer;
  jobs: JobRunner;
  log: Logger;
  publicUrl: string;
  /** The development outbox is used when no provider is configured (config.messaging.devOutbox). */
  devOutbox: boolean;
  maxAttempts: number;
}

export interface EmailRequest {
  tenantId?: string | null;
  /** A user's address; null for a user without one (signed up with a username): a 409 USER_HAS_NO_EMAIL. */
  to: string | null;
  type: EmailTemplateType;
  vars: Record<string, string>;
  /** Query parameters for `{{link}}`: appended to the template's redirectURL (else PUBLIC_URL + the type's default path). */
  linkParams?: Record<string, string>;
}

export interface SmsRequest {
  tenantId?: string | null;
  to: string;
  type: SmsTemplateType;
  vars: Record<string, string>;
}

interface Sealed {
  to: string;
  vars: Record<string, string>;
  linkParams?: Record<string, string>;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function deliveryOut(r: store.DeliveryRow): Delivery {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    channel: r.channel,
    type: r.type,
    to: r.recipient,
    status: r.status,
    provider: r.provider,
    attempts: r.attempts,
    lastError: r.last_error,
    providerMessageId: r.provider_message_id,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    sentAt: iso(r.sent_at),
  };
}

function withParams(base: string, params: Record<string, string>): string {
  const u = new URL(base);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

export type MessagingService = ReturnType<typeof createMessagingService>;

/**
 * Delivery of email (SMTP) and SMS (Twilio's REST API). `sendEmail`/`sendSms` record a delivery and enqueue a job in
 * the caller's transaction; the job renders the template (the stored one, else the built-in default) and delivers it,
 * retrying transient failures with the runner's backoff. Variables ride in the job sealed with the KEK (they carry
 * codes and links). With no provider configured the message goes to the development outbox when that is on, and is
 * recorded as failed when it is off (production), never dropped.
 */
export function createMessagingService(deps: MessagingDeps) {
  const { db, kek, jobs } = deps;
  const config = createMessagingConfigService({ db, kek, publicUrl: deps.publicUrl });
  const smtp = createSmtpSender();

  async function enqueue(
    q: Queryable,
    channel: 'email' | 'sms',
    type: string,
    tenantId: string | null,
    sealed: Sealed,
  ): Promise<{ deliveryId: string }> {
    const to = sealed.to.trim();
    if (!to)
      throw new AppError(
        'VALIDATION',
        `to must name the ${channel === 'email' ? 'email address' : 'phone number'} to send to`,
      );
    const id = newId();
    await store.insertDelivery(q, { id, tenantId, channel, type, recipient: to });
    const jobId = await jobs.enqueue(q, {
      kind: DELIVER_JOB,
      tenantId: tenantId ?? undefined,
      payload: { deliveryId: id, sealed: encrypt(kek, JSON.stringify({ ...sealed, to })) },
      maxAttempts: deps.maxAttempts,
    });
    await store.setDeliveryJob(q, id, jobId);
    // The caller's transaction commits after this returns; nudge the worker shortly after (the poll is the fallback).
    setTimeout(() => jobs.notify(), 5).unref?.();
    return { deliveryId: id };
  }

  async function toOutbox(
    d: store.DeliveryRow,
    m: { from: string | null; subject: string | null; text: string; html: string | null },
    attempts: number,
  ) {
    await db.transaction(async (tx) => {
      await store.insertOutbox(tx, {
        id: newId(),
        delivery_id: d.id,
        tenant_id: d.tenant_id,
        channel: d.channel,
        type: d.type,
        recipient: d.recipient,
        sender: m.from,
        subject: m.subject,
        text_body: m.text,
        html_body: m.html,
      });
      await store.updateDelivery(tx, d.id, { status: 'dev-outbox', provider: 'dev-outbox', attempts });
    });
  }

  const noProvider = (channel: 'email' | 'sms') =>
    channel === 'email'
      ? 'No email provider is configured (POST /identity/resources/mail/v1/configurations) and the development outbox is off (production mode)'
      : 'No SMS provider is configured (POST /identity/resources/configurations/v1/sms) and the development outbox is off (production mode)';

  async function deliverEmail(d: store.DeliveryRow, s: Sealed, attempts: number): Promise<void> {
    const type = d.type as EmailTemplateType;
    const tpl = await store.emailTemplate(db, type);
    if (tpl && !tpl.active) {
      await store.updateDelivery(db, d.id, {
        status: 'skipped',
        attempts,
        lastError: `The ${type} email template is inactive`,
      });
      return;
    }
    const cfg = await store.getMailConfig(db);
    const def = DEFAULT_EMAIL_TEMPLATES[type];
    const vars: Record<string, string> = { email: s.to, ...s.vars };
    if (vars.link === undefined && s.linkParams)
      vars.link = withParams(tpl?.redirect_url || deps.publicUrl + defaultLinkPath(type), s.linkParams);
    const html = render(tpl?.html_template ?? def.html, vars, escapeHtml);
    const subject = oneLine(render(tpl?.subject ?? def.subject, vars));
    const text = htmlToText(html);
    // A v2 (API) configuration may leave the sender to the templates; Mailgun then sends as no-reply@<domain>.
    const fromAddress =
      tpl?.sender_email ||
      cfg?.sender_email ||
      (cfg?.provider === 'mailgun' && cfg.domain ? `no-reply@${cfg.domain}` : 'no-reply@gatehouse.local');
    const fromName = oneLine(tpl?.from_name ?? cfg?.from_name ?? 'Gatehouse');
    if (!cfg) {
      if (deps.devOutbox)
        return toOutbox(
          d,
          { from: fromName ? `${fromName} <${fromAddress}>` : fromAddress, subject, text, html },
          attempts,
        );
      await store.updateDelivery(db, d.id, { status: 'failed', attempts, lastError: noProvider('email') });
      deps.log.error({ deliveryId: d.id, type }, noProvider('email'));
      return;
    }
    const message = { from: { name: fromName, address: fromAddress }, to: s.to, subject, text, html };
    const apiKey = () => config.unseal(cfg.password_enc ?? '');
    const r =
      cfg.provider === 'sendgrid'
        ? await sendSendgrid({ baseUrl: cfg.base_url || SENDGRID_BASE_URL, apiKey: apiKey() }, message)
        : cfg.provider === 'mailgun'
          ? await sendMailgun(
              {
                baseUrl: cfg.base_url || MAILGUN_BASE_URLS[cfg.region === 'eu' ? 'eu' : 'us'],
                apiKey: apiKey(),
                domain: cfg.domain ?? '',
              },
              message,
            )
          : await smtp.send(
              {
                host: cfg.host ?? '',
                port: cfg.port ?? 587,
                secure: cfg.secure,
                username: cfg.username,
                password: cfg.password_enc ? config.unseal(cfg.password_enc) : null,
                version: cfg.updated_at.toISOString(),
              },
              message,
            );
    await store.updateDelivery(db, d.id, {
      status: 'sent',
      provider: cfg.provider,
      attempts,
      providerMessageId: r.messageId,
    });
  }

  async function deliverSms(d: store.DeliveryRow, s: Sealed, attempts: number): Promise<void> {
    const type = d.type as SmsTemplateType;
    const tpl = await store.smsTemplate(db, type);
    if (tpl && !tpl.active) {
      await store.updateDelivery(db, d.id, {
        status: 'skipped',
        attempts,
        lastError: `The ${type} SMS template is inactive`,
      });
      return;
    }
    const body = render(tpl?.body ?? DEFAULT_SMS_TEMPLATES[type], s.vars).trim();
    const cfg = await store.getSmsConfig(db);
    if (!cfg) {
      if (deps.devOutbox) return toOutbox(d, { from: null, subject: null, text: body, html: null }, attempts);
      await store.updateDelivery(db, d.id, { status: 'failed', attempts, lastError: noProvider('sms') });
      deps.log.error({ deliveryId: d.id, type }, noProvider('sms'));
      return;
    }
    const r = await sendTwilio(
      {
        baseUrl: cfg.base_url || TWILIO_BASE_URL,
        accountId: cfg.account_id,
        token: config.unseal(cfg.token_enc),
        serviceId: cfg.service_id,
        senderName: cfg.sender_name,
      },
      s.to,
      body,
    );
    await store.updateDelivery(db, d.id, {
      status: 'sent',
      provider: 'twilio',
      attempts,
      providerMessageId: r.messageId,
    });
  }

  const handler: JobHandler = {
    async run({ job }) {
      const deliveryId = String(job.payload.deliveryId);
      const d = await store.delivery(db, deliveryId);
      if (!d || d.status === 'sent' || d.status === 'dev-outbox' || d.status === 'failed' || d.status === 'skipped')
        return;
      const s = JSON.parse(decrypt(kek, String(job.payload.sealed))) as Sealed;
      try {
        if (d.channel === 'email') await deliverEmail(d, s, job.attempts);
        else await deliverSms(d, s, job.attempts);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const final = (err instanceof DeliveryError && err.permanent) || job.attempts >= job.max_attempts;
        await store.updateDelivery(db, d.id, {
          status: final ? 'failed' : 'retrying',
          attempts: job.attempts,
          lastError: message,
        });
        if (final) {
          deps.log.error(
            { deliveryId: d.id, channel: d.channel, type: d.type, err: message },
            'message delivery failed',
          );
          return;
        }
        throw err; // the runner retries with backoff
      }
    },
    async onFailed(q: Db, job: JobRow, error: string) {
      await store.updateDelivery(q, String(job.payload.deliveryId), {
        status: 'failed',
        attempts: job.attempts,
        lastError: error,
      });
    },
  };

  return {
    config,
    /** Queues an email in the caller's transaction; delivered by a job once it commits. */
    async sendEmail(q: Queryable, m: EmailRequest): Promise<{ deliveryId: string }> {
      if (!isEmailType(m.type)) throw new Error(`unknown email template type ${m.type}`);
      if (!m.to)
        throw new AppError('USER_HAS_NO_EMAIL', `The user has no email address: the ${m.type} email cannot be sent`);
      return enqueue(q, 'email', m.type, m.tenantId ?? null, {
        to: m.to.trim().toLowerCase(),
        vars: m.vars,
        linkParams: m.linkParams,
      });
    },
    /** Queues an SMS in the caller's transaction; delivered by a job once it commits. */
    async sendSms(q: Queryable, m: SmsRequest): Promise<{ deliveryId: string }> {
      if (!isSmsType(m.type)) throw new Error(`unknown SMS template type ${m.type}`);
      return enqueue(q, 'sms', m.type, m.tenantId ?? null, { to: m.to.trim(), vars: m.vars });
    },
    async getDelivery(id: string): Promise<Delivery> {
      const r = /^[0-9a-f-]{36}$/i.test(id) ? await store.delivery(db, id) : undefined;
      if (!r) throw new AppError('MESSAGE_DELIVERY_NOT_FOUND', `No delivery with id ${id}`);
      return deliveryOut(r);
    },
    /** The vendor's test send: any template type of the channel, checked (400 on an unknown type or bad recipient). */
    async sendTest(b: {
      channel: 'email' | 'sms';
      to: string;
      type?: string;
      vars?: Record<string, string>;
      tenantId?: string;
    }): Promise<{ deliveryId: string }> {
      const type = b.type ?? 'OTC';
      const vars = b.vars ?? { code: '123456' };
      if (b.channel === 'email') {
        if (!isEmailType(type))
          throw new AppError('VALIDATION', `type must be an email template type: ${EMAIL_TEMPLATE_TYPES.join(', ')}`, {
            fields: ['type'],
          });
        if (!EMAIL.test(b.to.trim()))
          throw new AppError('VALIDATION', 'to must be an email address', { fields: ['to'] });
        return db.transaction((tx) => this.sendEmail(tx, { tenantId: b.tenantId, to: b.to, type, vars }));
      }
      if (!isSmsType(type))
        throw new AppError('VALIDATION', `type must be an SMS template type: ${SMS_TEMPLATE_TYPES.join(', ')}`, {
          fields: ['type'],
        });
      if (!PHONE.test(b.to.trim()))
        throw new AppError('VALIDATION', 'to must be a phone number in E.164 form, e.g. +14155550123', {
          fields: ['to'],
        });
      return db.transaction((tx) => this.sendSms(tx, { tenantId: b.tenantId, to: b.to, type, vars }));
    },
    async listDeliveries(f: store.DeliveryFilter, limit = 50, page = 0) {
      const { rows, total } = await store.listDeliveries(db, f, limit, page * limit);
      return { items: rows.map(deliveryOut), _metadata: { totalItems: total, totalPages: Math.ceil(total / limit) } };
    },
    async outbox(f: store.DeliveryFilter, limit = 50): Promise<OutboxMessage[]> {
      if (!deps.devOutbox) throw new AppError('DEV_OUTBOX_DISABLED');
      const rows = await store.listOutbox(
        db,
        { ...f, recipient: f.recipient?.includes('@') ? f.recipient.trim().toLowerCase() : f.recipient },
        limit,
      );
      return rows.map((r) => ({
        id: r.id,
        deliveryId: r.delivery_id,
        tenantId: r.tenant_id,
        channel: r.channel,
        type: r.type,
        to: r.recipient,
        from: r.sender,
        subject: r.subject,
        text: r.text_body,
        html: r.html_body,
        createdAt: r.created_at.toISOString(),
      }));
    },
    async clearOutbox(): Promise<number> {
      if (!deps.devOutbox) throw new AppError('DEV_OUTBOX_DISABLED');
      return store.clearOutbox(db);
    },
    devOutboxEnabled: deps.devOutbox,
    /** Job handlers to register in the runner (context.ts). */
    jobs: { [DELIVER_JOB]: handler } as Record<string, JobHandler>,
    close(): void {
      smtp.close();
    },
  };
}
