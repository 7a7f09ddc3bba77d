import type { Queryable } from '../../storage/db.ts';

export interface MailConfigRow {
  provider: string;
  /** SMTP only (NULL for API providers, 0022). */
  host: string | null;
  port: number | null;
  secure: boolean;
  username: string | null;
  password_enc: string | null;
  sender_email: string;
  from_name: string;
  /** Email providers v2 (0022): Mailgun's sending domain and region (us/eu), the API base URL override. */
  domain?: string | null;
  region?: string | null;
  base_url?: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SmsConfigRow {
  provider: string;
  account_id: string;
  token_enc: string;
  service_id: string | null;
  sender_name: string | null;
  channel: string;
  base_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface EmailTemplateRow {
  id: string;
  type: string;
  subject: string;
  html_template: string;
  sender_email: string | null;
  from_name: string | null;
  redirect_url: string | null;
  success_redirect_url: string | null;
  redirect_url_pattern: string | null;
  success_redirect_url_pattern: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface SmsTemplateRow {
  type: string;
  body: string;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  tenant_id: string | null;
  channel: 'email' | 'sms';
  type: string;
  recipient: string;
  status: 'queued' | 'retrying' | 'sent' | 'dev-outbox' | 'failed' | 'skipped';
  provider: string | null;
  attempts: number;
  last_error: string | null;
  provider_message_id: string | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
}

export interface OutboxRow {
  id: string;
  delivery_id: string;
  tenant_id: string | null;
  channel: string;
  type: string;
  recipient: string;
  sender: string | null;
  subject: string | null;
  text_body: string;
  html_body: string | null;
  created_at: Date;
}

// -- configuration --

export async function getMailConfig(q: Queryable): Promise<MailConfigRow | undefined> {
  return (await q.query<MailConfigRow>(`SELECT * FROM mail_configurations WHERE id = 'default'`)).rows[0];
}

/** Creates or replaces the configuration; `created` tells which. */
export async function putMailConfig(
  q: Queryable,
  c: Omit<MailConfigRow, 'created_at' | 'updated_at'>,
): Promise<{ row: MailConfigRow; created: boolean }> {
  const { rows } = await q.query<MailConfigRow & { created: boolean }>(
    `INSERT INTO mail_configurations (id, provider, host, port, secure, username, password_enc, sender_email, from_name, domain, region, base_url)
     VALUES ('default', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (id) DO UPDATE SET provider = $1, host = $2, port = $3, secure = $4, username = $5, password_enc = $6,
       sender_email = $7, from_name = $8, domain = $9, region = $10, base_url = $11, updated_at = clock_timestamp()
     RETURNING *, (xmax = 0) AS created`,
    [
      c.provider,
      c.host,
      c.port,
      c.secure,
      c.username,
      c.password_enc,
      c.sender_email,
      c.from_name,
      c.domain ?? null,
      c.region ?? null,
      c.base_url ?? null,
    ],
  );
  return { row: rows[0], created: rows[0].created };
}

export async function deleteMailConfig(q: Queryable): Promise<boolean> {
  return (await q.query(`DELETE FROM mail_configurations WHERE id = 'default'`)).rowCount > 0;
}

export async function getSmsConfig(q: Queryable): Promise<SmsConfigRow | undefined> {
  return (await q.query<SmsConfigRow>(`SELECT * FROM sms_configurations WHERE id = 'default'`)).rows[0];
}

export async function putSmsConfig(
  q: Queryable,
  c: Omit<SmsConfigRow, 'created_at' | 'updated_at'>,
): Promise<{ row: SmsConfigRow; created: boolean }> {
  const { rows } = await q.query<SmsConfigRow & { created: boolean }>(
    `INSERT INTO sms_configurations (id, provider, account_id, token_enc, service_id, sender_name, channel, base_url)
     VALUES ('default', $1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET provider = $1, account_id = $2, token_enc = $3, service_id = $4, sender_name = $5,
       channel = $6, base_url = $7, updated_at = clock_timestamp()
     RETURNING *, (xmax = 0) AS created`,
    [c.provider, c.account_id, c.token_enc, c.service_id, c.sender_name, c.channel, c.base_url],
  );
  return { row: rows[0], created: rows[0].created };
}

export async function deleteSmsConfig(q: Queryable): Promise<boolean> {
  return (await q.query(`DELETE FROM sms_configurations WHERE id = 'default'`)).rowCount > 0;
}

// -- templates --

export async function emailTemplate(q: Queryable, type: string): Promise<EmailTemplateRow | undefined> {
  return (await q.query<EmailTemplateRow>('SELECT * FROM email_templates WHERE type = $1', [type])).rows[0];
}

export async function emailTemplates(q: Queryable, type?: string): Promise<EmailTemplateRow[]> {
  return type === undefined
    ? (await q.query<EmailTemplateRow>('SELECT * FROM email_templates ORDER BY type')).rows
    : (await q.query<EmailTemplateRow>('SELECT * FROM email_templates WHERE type = $1', [type])).rows;
}

export async function putEmailTemplate(
  q: Queryable,
  t: Omit<EmailTemplateRow, 'created_at' | 'updated_at'>,
): Promise<EmailTemplateRow> {
  const { rows } = await q.query<EmailTemplateRow>(
    `INSERT INTO email_templates (id, type, subject, html_template, sender_email, from_name, redirect_url, success_redirect_url,
                                  redirect_url_pattern, success_redirect_url_pattern, active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (type) DO UPDATE SET subject = $3, html_template = $4, sender_email = $5, from_name = $6, redirect_url = $7,
       success_redirect_url = $8, redirect_url_pattern = $9, success_redirect_url_pattern = $10, active = $11, updated_at = clock_timestamp()
     RETURNING *`,
    [
      t.id,
      t.type,
      t.subject,
      t.html_template,
      t.sender_email,
      t.from_name,
      t.redirect_url,
      t.success_redirect_url,
      t.redirect_url_pattern,
      t.success_redirect_url_pattern,
      t.active,
    ],
  );
  return rows[0];
}

export async function deleteEmailTemplate(q: Queryable, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM email_templates WHERE id = $1', [id])).rowCount > 0;
}

export async function smsTemplate(q: Queryable, type: string): Promise<SmsTemplateRow | undefined> {
  return (await q.query<SmsTemplateRow>('SELECT * FROM sms_templates WHERE type = $1', [type])).rows[0];
}

export async function smsTemplates(q: Queryable): Promise<SmsTemplateRow[]> {
  return (await q.query<SmsTemplateRow>('SELECT * FROM sms_templates ORDER BY type')).rows;
}

export async function putSmsTemplate(
  q: Queryable,
  t: { type: string; body: string; active: boolean },
): Promise<{ row: SmsTemplateRow; created: boolean }> {
  const { rows } = await q.query<SmsTemplateRow & { created: boolean }>(
    `INSERT INTO sms_templates (type, body, active) VALUES ($1, $2, $3)
     ON CONFLICT (type) DO UPDATE SET body = $2, active = $3, updated_at = clock_timestamp()
     RETURNING *, (xmax = 0) AS created`,
    [t.type, t.body, t.active],
  );
  return { row: rows[0], created: rows[0].created };
}

export async function deleteSmsTemplate(q: Queryable, type: string): Promise<boolean> {
  return (await q.query('DELETE FROM sms_templates WHERE type = $1', [type])).rowCount > 0;
}

// -- deliveries and the development outbox --

export async function insertDelivery(
  q: Queryable,
  d: { id: string; tenantId: string | null; channel: 'email' | 'sms'; type: string; recipient: string },
): Promise<void> {
  await q.query(
    'INSERT INTO message_deliveries (id, tenant_id, channel, type, recipient) VALUES ($1, $2, $3, $4, $5)',
    [d.id, d.tenantId, d.channel, d.type, d.recipient],
  );
}

export async function setDeliveryJob(q: Queryable, id: string, jobId: string): Promise<void> {
  await q.query('UPDATE message_deliveries SET job_id = $2 WHERE id = $1', [id, jobId]);
}

export async function delivery(q: Queryable, id: string): Promise<DeliveryRow | undefined> {
  return (await q.query<DeliveryRow>('SELECT * FROM message_deliveries WHERE id = $1', [id])).rows[0];
}

export async function updateDelivery(
  q: Queryable,
  id: string,
  u: {
    status: DeliveryRow['status'];
    provider?: string | null;
    attempts: number;
    lastError?: string | null;
    providerMessageId?: string | null;
  },
): Promise<void> {
  const done = u.status === 'sent' || u.status === 'dev-outbox';
  await q.query(
    `UPDATE message_deliveries SET status = $2, provider = coalesce($3, provider), attempts = $4, last_error = $5,
       provider_message_id = coalesce($6, provider_message_id), updated_at = clock_timestamp(),
       sent_at = CASE WHEN $7 THEN clock_timestamp() ELSE sent_at END
     WHERE id = $1`,
    [id, u.status, u.provider ?? null, u.attempts, u.lastError ?? null, u.providerMessageId ?? null, done],
  );
}

export interface DeliveryFilter {
  status?: string;
  channel?: string;
  type?: string;
  recipient?: string;
  tenantId?: string;
}

function where(f: DeliveryFilter, cols: { recipient: string }): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (col: string, v: unknown) => {
    params.push(v);
    parts.push(`${col} = $${params.length}`);
  };
  if (f.status !== undefined) add('status', f.status);
  if (f.channel !== undefined) add('channel', f.channel);
  if (f.type !== undefined) add('type', f.type);
  if (f.recipient !== undefined) add(cols.recipient, f.recipient);
  if (f.tenantId !== undefined) add('tenant_id', f.tenantId);
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export async function listDeliveries(
  q: Queryable,
  f: DeliveryFilter,
  limit: number,
  offset: number,
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const w = where(f, { recipient: 'recipient' });
  const { rows } = await q.query<DeliveryRow & { total: number }>(
    `SELECT *, count(*) OVER ()::int AS total FROM message_deliveries ${w.sql}
     ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    w.params,
  );
  return {
    rows,
    total:
      rows[0]?.total ??
      (offset > 0
        ? (await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM message_deliveries ${w.sql}`, w.params)).rows[0]
            .n
        : 0),
  };
}

export async function insertOutbox(q: Queryable, o: Omit<OutboxRow, 'created_at'>): Promise<void> {
  await q.query(
    `INSERT INTO dev_outbox (id, delivery_id, tenant_id, channel, type, recipient, sender, subject, text_body, html_body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [o.id, o.delivery_id, o.tenant_id, o.channel, o.type, o.recipient, o.sender, o.subject, o.text_body, o.html_body],
  );
}

export async function listOutbox(q: Queryable, f: DeliveryFilter, limit: number): Promise<OutboxRow[]> {
  const w = where({ ...f, status: undefined }, { recipient: 'recipient' });
  return (
    await q.query<OutboxRow>(
      `SELECT * FROM dev_outbox ${w.sql} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      w.params,
    )
  ).rows;
}

export async function clearOutbox(q: Queryable): Promise<number> {
  return (await q.query('DELETE FROM dev_outbox')).rowCount;
}
