import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestApp } from './harness.ts';

/** A message the local SMTP server received, parsed (headers, text and HTML parts decoded). */
export interface Mail {
  /** Envelope sender and recipients (lower-cased recipients). */
  envelopeFrom: string;
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
  raw: string;
  /** The SMTP AUTH credentials used by the client, when it authenticated. */
  auth?: { username: string; password: string };
}

// -- a small MIME reader (nodemailer sends base64 or quoted-printable parts; both are handled) --

function splitHead(raw: string): { headers: Record<string, string>; body: string } {
  const i = raw.search(/\r?\n\r?\n/);
  const head = i < 0 ? raw : raw.slice(0, i);
  const body = i < 0 ? '' : raw.slice(i).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const c = line.indexOf(':');
    if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
  }
  return { headers, body };
}

function decodeQP(s: string): Buffer {
  const soft = s.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i], 'utf8'));
  }
  return Buffer.from(bytes);
}

/** RFC 2047 encoded words (=?utf-8?B?...?= / =?utf-8?Q?...?=). */
export function decodeWords(s: string): string {
  return s
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, _cs: string, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQP(text.replace(/_/g, ' ')).toString('utf8'),
    );
}

function param(value: string, name: string): string | undefined {
  const m = new RegExp(`${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return m ? (m[1] ?? m[2]) : undefined;
}

function decodeBody(headers: Record<string, string>, body: string): string {
  const enc = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (enc === 'quoted-printable') return decodeQP(body).toString('utf8');
  return body;
}

function walk(headers: Record<string, string>, body: string, out: { text: string; html: string }): void {
  const type = (headers['content-type'] ?? 'text/plain').toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = param(headers['content-type'], 'boundary');
    if (!boundary) return;
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) {
      if (part.startsWith('--')) break;
      const p = splitHead(part.replace(/^\r?\n/, ''));
      walk(p.headers, p.body.replace(/\r?\n$/, ''), out);
    }
    return;
  }
  if (type.startsWith('text/html')) out.html ||= decodeBody(headers, body);
  else if (type.startsWith('text/plain')) out.text ||= decodeBody(headers, body);
}

export function parseMail(raw: string): Omit<Mail, 'envelopeFrom' | 'to' | 'auth'> {
  const { headers, body } = splitHead(raw);
  const out = { text: '', html: '' };
  walk(headers, body, out);
  return {
    from: decodeWords(headers.from ?? ''),
    subject: decodeWords(headers.subject ?? ''),
    text: out.text.replace(/\r\n/g, '\n'),
    html: out.html.replace(/\r\n/g, '\n'),
    headers,
    raw,
  };
}

/** The first http(s) link in a message's text (query parameters intact). */
export function linkIn(m: { text: string }): URL {
  const found = /https?:\/\/[^\s)<>"]+/.exec(m.text);
  if (!found) throw new Error(`no link in message: ${m.text}`);
  return new URL(found[0]);
}

/** The first run of `digits` digits standing alone in a message's text (not inside a link, token or id). */
export function codeIn(m: { text: string }, digits = 6): string {
  const found = new RegExp(`(?<![\\w/=&?.-])(\\d{${digits}})(?![\\w/=&-])`).exec(m.text);
  if (!found) throw new Error(`no ${digits}-digit code in message: ${m.text}`);
  return found[1];
}

export type Mailbox = Awaited<ReturnType<typeof startMailbox>>;

/**
 * A real SMTP server (the `smtp-server` package) on an ephemeral port of 127.0.0.1, keeping every message it accepts.
 * No STARTTLS (so nodemailer talks plain SMTP); AUTH is accepted and recorded, and required when `credentials` is set.
 * `failNext(n, code)` answers the next n recipients with an SMTP error (4xx transient, 5xx permanent).
 */
export async function startMailbox(opts: { credentials?: { username: string; password: string } } = {}) {
  const messages: Mail[] = [];
  let failures: { left: number; code: number } = { left: 0, code: 451 };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !opts.credentials,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 200,
    onAuth(auth, _session, cb) {
      if (
        opts.credentials &&
        (auth.username !== opts.credentials.username || auth.password !== opts.credentials.password)
      ) {
        return cb(new Error('Invalid username or password'));
      }
      cb(null, { user: { username: auth.username ?? '', password: auth.password ?? '' } });
    },
    onRcptTo(_address, _session, cb) {
      if (failures.left > 0) {
        failures.left--;
        return cb(
          Object.assign(new Error(failures.code >= 500 ? 'Mailbox unavailable' : 'Try again later'), {
            responseCode: failures.code,
          }),
        );
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const user = session.user as unknown as { username: string; password: string } | undefined;
        messages.push({
          ...parseMail(raw),
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          auth: user,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    messages,
    /** Resolves with the first message (received so far or later) matching `pred`; rejects after `timeoutMs`. */
    async waitFor(pred: (m: Mail) => boolean, timeoutMs = 15_000): Promise<Mail> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = messages.find(pred);
        if (m) return m;
        if (Date.now() > deadline)
          throw new Error(
            `no matching mail within ${timeoutMs} ms; received: ${JSON.stringify(messages.map((x) => ({ to: x.to, subject: x.subject })))}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** The messages sent to `address` (case-insensitive), oldest first. */
    to(address: string): Mail[] {
      return messages.filter((m) => m.to.includes(address.toLowerCase()));
    },
    failNext(n: number, code = 451): void {
      failures = { left: n, code };
    },
    /** Points the test app's email configuration (wire.md 9) at this server. */
    async configure(t: TestApp, extra: Record<string, unknown> = {}): Promise<void> {
      const r = await t.call('POST', '/identity/resources/mail/v1/configurations', {
        token: await t.vendorToken(),
        body: {
          provider: 'smtp',
          host: '127.0.0.1',
          port,
          secure: false,
          senderEmail: 'no-reply@gatehouse.test',
          fromName: 'Gatehouse Test',
          ...(opts.credentials ? { username: opts.credentials.username, password: opts.credentials.password } : {}),
          ...extra,
        },
      });
      if (r.status !== 201 && r.status !== 200)
        throw new Error(`mail configuration failed: ${r.status} ${JSON.stringify(r.body)}`);
    },
    async close(): Promise<void> {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A test app whose email goes to a fresh local mailbox, with the vendor token and, when `tenantId` is given, an
 * account of that id (named Acme). `close` stops both.
 */
export async function startAppWithMailbox(env: Record<string, string> = {}, tenantId?: string) {
  const t = await startTestApp(env);
  const vendor = await t.vendorToken();
  const mailbox = await startMailbox();
  await mailbox.configure(t);
  if (tenantId) {
    const r = await t.call('POST', '/tenants/resources/tenants/v1', {
      token: vendor,
      body: { tenantId, name: 'Acme' },
    });
    if (r.status !== 201) throw new Error(`account ${tenantId}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return {
    t,
    vendor,
    mailbox,
    async close() {
      await t.close();
      await mailbox.close();
    },
  };
}
