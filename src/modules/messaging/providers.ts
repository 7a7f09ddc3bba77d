import { DeliveryError, type EmailMessage } from './transports.ts';

/** Email delivery over a provider's HTTP API (email configuration v2). Base URLs are overridable (tests, proxies). */
export const SENDGRID_BASE_URL = 'https://api.sendgrid.com';
export const MAILGUN_BASE_URLS = { us: 'https://api.mailgun.net', eu: 'https://api.eu.mailgun.net' } as const;

const TIMEOUT_MS = 15_000;

/** 4xx answers are final (bad key, rejected sender or recipient) except 408 and 429; 5xx and network errors are retried. */
const permanent = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

async function post(name: string, url: string, init: RequestInit): Promise<{ res: Response; text: string }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, method: 'POST', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new DeliveryError(`${name} at ${new URL(url).origin} unreachable: ${(err as Error).message}`, false);
  }
  return { res, text: await res.text() };
}

function detail(text: string, pick: (json: any) => string | undefined): string {
  try {
    return pick(JSON.parse(text)) ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/**
 * SendGrid's v3 Mail Send API: `POST {baseUrl}/v3/mail/send` with `Authorization: Bearer <API key>` and a JSON body
 * (personalizations[].to, from, subject, content: text/plain first, then text/html). Success is 202 with the
 * message id in the `X-Message-Id` header; errors carry `{errors: [{message, field}]}`.
 */
export async function sendSendgrid(
  s: { baseUrl: string; apiKey: string },
  m: EmailMessage,
): Promise<{ messageId: string }> {
  const url = `${s.baseUrl.replace(/\/+$/, '')}/v3/mail/send`;
  const { res, text } = await post('SendGrid', url, {
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      personalizations: [{ to: [{ email: m.to }] }],
      from: m.from.name ? { email: m.from.address, name: m.from.name } : { email: m.from.address },
      subject: m.subject,
      content: [
        { type: 'text/plain', value: m.text },
        { type: 'text/html', value: m.html },
      ],
    }),
  });
  if (res.ok) return { messageId: res.headers.get('x-message-id') ?? '' };
  const why = detail(text, (j) =>
    Array.isArray(j?.errors)
      ? j.errors
          .map((e: { message?: string; field?: string }) => `${e.message ?? ''}${e.field ? ` (${e.field})` : ''}`)
          .join('; ')
      : undefined,
  );
  throw new DeliveryError(`SendGrid answered ${res.status}: ${why}`, permanent(res.status));
}

/**
 * Mailgun's messages API: `POST {baseUrl}/v3/{domain}/messages` with HTTP basic auth `api:<API key>` and form fields
 * from, to, subject, text, html. The base URL is the region's (US api.mailgun.net, EU api.eu.mailgun.net) unless
 * overridden. Success is 200 `{id, message}`; errors carry `{message}` (401 answers plain text).
 */
export async function sendMailgun(
  s: { baseUrl: string; apiKey: string; domain: string },
  m: EmailMessage,
): Promise<{ messageId: string }> {
  const url = `${s.baseUrl.replace(/\/+$/, '')}/v3/${encodeURIComponent(s.domain)}/messages`;
  const from = m.from.name ? `"${m.from.name.replace(/["\\]/g, '')}" <${m.from.address}>` : m.from.address;
  const form = new URLSearchParams({ from, to: m.to, subject: m.subject, text: m.text, html: m.html });
  const { res, text } = await post('Mailgun', url, {
    headers: {
      authorization: `Basic ${Buffer.from(`api:${s.apiKey}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: form.toString(),
  });
  if (res.ok) return { messageId: detail(text, (j) => j?.id) };
  throw new DeliveryError(`Mailgun answered ${res.status}: ${detail(text, (j) => j?.message)}`, permanent(res.status));
}
