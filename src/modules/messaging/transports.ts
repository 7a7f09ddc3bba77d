import nodemailer, { type Transporter } from 'nodemailer';

/** A delivery failure; `permanent` ones (rejected recipient, bad credentials) are not retried. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  username: string | null;
  password: string | null;
  /** Cache key: the configuration's updated_at. */
  version: string;
}

export interface EmailMessage {
  from: { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  html: string;
}

const TIMEOUT_MS = 15_000;

/**
 * SMTP through nodemailer. One pooled transport per configuration version (a changed configuration closes the old
 * pool). Bodies are sent base64-encoded (textEncoding), so receivers and test parsers see one encoding.
 */
export function createSmtpSender() {
  let cached: { version: string; transport: Transporter } | undefined;

  function transportFor(s: SmtpSettings): Transporter {
    if (cached?.version === s.version) return cached.transport;
    cached?.transport.close();
    const transport = nodemailer.createTransport({
      pool: true,
      maxConnections: 3,
      host: s.host,
      port: s.port,
      secure: s.secure,
      auth: s.username ? { user: s.username, pass: s.password ?? '' } : undefined,
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: TIMEOUT_MS,
    });
    cached = { version: s.version, transport };
    return transport;
  }

  return {
    async send(s: SmtpSettings, m: EmailMessage): Promise<{ messageId: string }> {
      try {
        const info = await transportFor(s).sendMail({
          from: m.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          textEncoding: 'base64',
        });
        return { messageId: String(info.messageId ?? '') };
      } catch (err) {
        const e = err as { message?: string; responseCode?: number; code?: string };
        const message = `SMTP ${s.host}:${s.port}: ${e.message ?? String(err)}`;
        // 5xx replies are final (unknown mailbox, auth refused); 4xx, timeouts and connection errors are retried.
        throw new DeliveryError(message, typeof e.responseCode === 'number' && e.responseCode >= 500);
      }
    },
    close(): void {
      cached?.transport.close();
      cached = undefined;
    },
  };
}

export interface TwilioSettings {
  baseUrl: string;
  accountId: string;
  token: string;
  serviceId: string | null;
  senderName: string | null;
}

/**
 * Twilio's Messages API: `POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP basic auth
 * (AccountSid:AuthToken), form fields To, Body and From (a number or alphanumeric sender) or MessagingServiceSid.
 */
export async function sendTwilio(s: TwilioSettings, to: string, body: string): Promise<{ messageId: string }> {
  const url = `${s.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(s.accountId)}/Messages.json`;
  const form = new URLSearchParams({ To: to, Body: body });
  if (s.serviceId) form.set('MessagingServiceSid', s.serviceId);
  else if (s.senderName) form.set('From', s.senderName);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${s.accountId}:${s.token}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new DeliveryError(`SMS provider at ${new URL(url).origin} unreachable: ${(err as Error).message}`, false);
  }
  const text = await res.text();
  let json: { sid?: string; message?: string; code?: number } = {};
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (res.ok) return { messageId: json.sid ?? '' };
  const detail = json.message ? `${json.message}${json.code ? ` (code ${json.code})` : ''}` : text.slice(0, 200);
  const permanent = res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429;
  throw new DeliveryError(`SMS provider answered ${res.status}: ${detail}`, permanent);
}
