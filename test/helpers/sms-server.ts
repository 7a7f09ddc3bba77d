import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './harness.ts';

/** An SMS the local provider accepted. */
export interface Sms {
  sid: string;
  accountId: string;
  to: string;
  from?: string;
  messagingServiceSid?: string;
  body: string;
}

export type SmsServer = Awaited<ReturnType<typeof startSmsServer>>;

/**
 * A local HTTP server speaking Twilio's Messages API: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` with
 * HTTP basic auth (AccountSid:AuthToken) and a form body (To, Body, From | MessagingServiceSid). Answers 201 with a
 * message resource, 401 (code 20003) on bad credentials, 400 (code 21604/21602) on missing fields, as Twilio does.
 * `failNext(n, status)` answers the next n requests with that status (500 transient, 400 permanent).
 */
export async function startSmsServer(opts: { accountId?: string; token?: string } = {}) {
  const accountId = opts.accountId ?? `AC${randomBytes(16).toString('hex')}`;
  const token = opts.token ?? randomBytes(16).toString('hex');
  const messages: Sms[] = [];
  let failures = { left: 0, status: 500 };
  const requests: { path: string; authorized: boolean }[] = [];

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname);
      const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, pass] = auth ? Buffer.from(auth[1], 'base64').toString('utf8').split(':') : [];
      const authorized = user === accountId && pass === token;
      requests.push({ path: url.pathname, authorized });
      if (!m || req.method !== 'POST')
        return send(res, 404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      if (!authorized || decodeURIComponent(m[1]) !== accountId)
        return send(res, 401, { code: 20003, message: 'Authenticate', status: 401 });
      if (failures.left > 0) {
        failures.left--;
        return send(res, failures.status, {
          code: failures.status >= 500 ? 20500 : 21211,
          message: failures.status >= 500 ? 'Internal Server Error' : "The 'To' number is not a valid phone number.",
          status: failures.status,
        });
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To');
      const body = form.get('Body');
      const from = form.get('From') ?? undefined;
      const messagingServiceSid = form.get('MessagingServiceSid') ?? undefined;
      if (!to) return send(res, 400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
      if (!body) return send(res, 400, { code: 21602, message: 'Message body is required.', status: 400 });
      if (!from && !messagingServiceSid)
        return send(res, 400, { code: 21603, message: "A 'From' phone number is required.", status: 400 });
      const sid = `SM${randomBytes(16).toString('hex')}`;
      messages.push({ sid, accountId, to, from, messagingServiceSid, body });
      send(res, 201, {
        sid,
        account_sid: accountId,
        to,
        from: from ?? null,
        messaging_service_sid: messagingServiceSid ?? null,
        body,
        status: 'queued',
        num_segments: '1',
        direction: 'outbound-api',
        date_created: new Date().toUTCString(),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    accountId,
    token,
    messages,
    requests,
    /** Resolves with the first SMS (received so far or later) matching `pred`; rejects after `timeoutMs`. */
    async waitFor(pred: (m: Sms) => boolean, timeoutMs = 15_000): Promise<Sms> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = messages.find(pred);
        if (m) return m;
        if (Date.now() > deadline)
          throw new Error(
            `no matching SMS within ${timeoutMs} ms; received: ${JSON.stringify(messages.map((x) => ({ to: x.to, body: x.body })))}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    to(phone: string): Sms[] {
      return messages.filter((m) => m.to === phone);
    },
    failNext(n: number, status = 500): void {
      failures = { left: n, status };
    },
    /** Points the test app's SMS configuration (wire.md 9) at this server. */
    async configure(t: TestApp, extra: Record<string, unknown> = {}): Promise<void> {
      const r = await t.call('POST', '/identity/resources/configurations/v1/sms', {
        token: await t.vendorToken(),
        body: { provider: 'twilio', accountId, token, senderName: '+15550001111', baseUrl, ...extra },
      });
      if (r.status !== 201 && r.status !== 200)
        throw new Error(`SMS configuration failed: ${r.status} ${JSON.stringify(r.body)}`);
    },
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The first run of `digits` digits standing alone in an SMS body. */
export function smsCode(m: { body: string }, digits = 6): string {
  const found = new RegExp(`(?<![\\w/=&?.-])(\\d{${digits}})(?![\\w/=&-])`).exec(m.body);
  if (!found) throw new Error(`no ${digits}-digit code in SMS: ${m.body}`);
  return found[1];
}
