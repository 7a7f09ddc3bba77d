import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';
import { codeIn, linkIn } from '../helpers/mailbox.ts';

/** A message a local provider accepted, in the shape the tests read (text part, html part). */
interface ApiMail {
  to: string;
  from: string;
  fromName?: string;
  subject: string;
  text: string;
  html: string;
  id: string;
}

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function listen(handler: Handler) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

function inbox() {
  const messages: ApiMail[] = [];
  const failures = { left: 0, status: 500 };
  return {
    messages,
    failures,
    async waitFor(pred: (m: ApiMail) => boolean, timeoutMs = 20_000): Promise<ApiMail> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = messages.find(pred);
        if (m) return m;
        if (Date.now() > deadline)
          throw new Error(`no matching message; got ${JSON.stringify(messages.map((x) => [x.to, x.subject]))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/**
 * SendGrid's v3 Mail Send API: `POST /v3/mail/send`, `Authorization: Bearer <key>`, JSON body; 202 with X-Message-Id,
 * 401/400 with `{errors: [{message, field, help}]}` as SendGrid answers.
 */
async function startSendgrid(apiKey: string) {
  const box = inbox();
  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const err = (message: string, field: string | null) => ({ errors: [{ message, field, help: null }] });
  const srv = await listen((req, raw, res) => {
    if (req.method !== 'POST' || req.url !== '/v3/mail/send') return send(res, 404, err('Not found', null));
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return send(res, 401, err('The provided authorization grant is invalid, expired, or revoked', null));
    if (box.failures.left > 0) {
      box.failures.left--;
      return send(res, box.failures.status, err('Internal error', null));
    }
    let b: any;
    try {
      b = JSON.parse(raw);
    } catch {
      return send(res, 400, err('Bad Request', null));
    }
    const to = b?.personalizations?.[0]?.to?.[0]?.email;
    if (!to) return send(res, 400, err('The to field is required', 'personalizations.0.to'));
    if (!b.from?.email) return send(res, 400, err('The from object must be provided for every email send', 'from'));
    if (!b.subject) return send(res, 400, err('The subject is required', 'subject'));
    const content: { type: string; value: string }[] = b.content ?? [];
    if (!content.length || content[0].type !== 'text/plain')
      return send(res, 400, err('The text/plain content type must be first', 'content'));
    const id = randomBytes(11).toString('base64url');
    box.messages.push({
      to,
      from: b.from.email,
      fromName: b.from.name,
      subject: b.subject,
      text: content[0].value,
      html: content.find((c) => c.type === 'text/html')?.value ?? '',
      id,
    });
    send(res, 202, undefined, { 'x-message-id': id });
  });
  return { ...box, ...srv };
}

/** Mailgun's messages API: `POST /v3/{domain}/messages`, basic auth `api:<key>`, form fields; 200 `{id, message}`. */
async function startMailgun(apiKey: string, domain: string) {
  const box = inbox();
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const srv = await listen((req, raw, res) => {
    const m = /^\/v3\/([^/]+)\/messages$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) return send(res, 404, { message: 'Not Found' });
    if (req.headers.authorization !== `Basic ${Buffer.from(`api:${apiKey}`).toString('base64')}`)
      return send(res, 401, 'Forbidden');
    if (decodeURIComponent(m[1]) !== domain)
      return send(res, 404, { message: `Domain not found: ${decodeURIComponent(m[1])}` });
    const f = new URLSearchParams(raw);
    for (const k of ['from', 'to']) if (!f.get(k)) return send(res, 400, { message: `'${k}' parameter is missing` });
    if (!f.get('text') && !f.get('html'))
      return send(res, 400, { message: "Need at least one of 'text' or 'html' parameters specified" });
    const id = `<${randomBytes(8).toString('hex')}@${domain}>`;
    box.messages.push({
      to: f.get('to')!,
      from: f.get('from')!,
      subject: f.get('subject') ?? '',
      text: f.get('text') ?? '',
      html: f.get('html') ?? '',
      id,
    });
    send(res, 200, { id, message: 'Queued. Thank you.' });
  });
  return { ...box, ...srv };
}

let t: TestApp;
let vendor: string;
let sendgrid: Awaited<ReturnType<typeof startSendgrid>>;
let mailgun: Awaited<ReturnType<typeof startMailgun>>;
const SG_KEY = `SG.${randomBytes(16).toString('hex')}`;
const MG_KEY = `key-${randomBytes(16).toString('hex')}`;
const V1 = '/identity/resources/mail/v1/configurations';
const V2 = '/identity/resources/mail/v2/configurations';

async function delivery(type: string, to: string) {
  const { rows } = await t.db.query<{ id: string }>(
    'SELECT id FROM message_deliveries WHERE type = $1 AND recipient = $2 ORDER BY created_at DESC LIMIT 1',
    [type, to],
  );
  return (await t.call('GET', `/identity/resources/messaging/v1/deliveries/${rows[0].id}`, { token: vendor })).body;
}
async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  sendgrid = await startSendgrid(SG_KEY);
  mailgun = await startMailgun(MG_KEY, 'mg.example.test');
  await account(t, { id: 'ep-acc', name: 'Providers' });
  for (const email of ['sg@ep.test', 'mg@ep.test']) await user(t, 'ep-acc', { email });
});
after(async () => {
  await t?.close();
  await sendgrid?.close();
  await mailgun?.close();
});

describe('SendGrid', () => {
  test('a password reset goes out through the v3 Mail Send API; its link works; the key is sealed and never answered', async () => {
    const c = await t.call('POST', V2, {
      token: vendor,
      body: {
        provider: 'sendgrid',
        secret: SG_KEY,
        baseUrl: sendgrid.baseUrl,
        senderEmail: 'auth@ep.test',
        fromName: 'Ep Auth',
      },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.provider, 'sendgrid');
    assert.equal(c.body.hasPassword, true);
    assert.ok(!JSON.stringify(c.body).includes(SG_KEY));
    const g = await t.call('GET', V1, { token: vendor });
    assert.equal(g.body.provider, 'sendgrid');
    assert.ok(!JSON.stringify(g.body).includes(SG_KEY));
    const { rows } = await t.db.query<{ password_enc: string }>(
      "SELECT password_enc FROM mail_configurations WHERE id = 'default'",
    );
    assert.ok(!rows[0].password_enc.includes(SG_KEY));

    assert.equal(
      (await t.call('POST', '/identity/resources/users/v1/passwords/reset', { body: { email: 'sg@ep.test' } })).status,
      201,
    );
    const m = await sendgrid.waitFor((x) => x.to === 'sg@ep.test');
    assert.equal(m.from, 'auth@ep.test');
    assert.equal(m.fromName, 'Ep Auth');
    assert.match(m.html, /<a /);
    const link = linkIn(m);
    const v = await t.call('POST', '/identity/resources/users/v1/passwords/reset/validate', {
      body: { userId: link.searchParams.get('userId'), token: link.searchParams.get('token') },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    const d = await until(
      () => delivery('ResetPassword', 'sg@ep.test'),
      (x) => x.status === 'sent',
    );
    assert.equal(d.status, 'sent');
    assert.equal(d.provider, 'sendgrid');
    assert.equal(d.providerMessageId, m.id);
  });

  test("a 5xx answer is retried; a rejected key fails the delivery with the provider's message", async () => {
    sendgrid.failures.left = 1;
    const r = await t.call('POST', '/identity/resources/messaging/v1/test', {
      token: vendor,
      body: { channel: 'email', to: 'retry@ep.test', type: 'OTC', vars: { code: '482913' } },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const m = await sendgrid.waitFor((x) => x.to === 'retry@ep.test');
    assert.equal(codeIn(m), '482913');
    const d = await until(
      () => t.call('GET', `/identity/resources/messaging/v1/deliveries/${r.body.deliveryId}`, { token: vendor }),
      (x) => x.body.status === 'sent',
    );
    assert.equal(d.body.status, 'sent');
    assert.ok(d.body.attempts >= 2);

    assert.equal(
      (
        await t.call('POST', V2, {
          token: vendor,
          body: { provider: 'sendgrid', secret: 'SG.wrong', baseUrl: sendgrid.baseUrl, senderEmail: 'auth@ep.test' },
        })
      ).status,
      201,
    );
    const bad = await t.call('POST', '/identity/resources/messaging/v1/test', {
      token: vendor,
      body: { channel: 'email', to: 'nokey@ep.test', type: 'OTC' },
    });
    const failed = await until(
      () => t.call('GET', `/identity/resources/messaging/v1/deliveries/${bad.body.deliveryId}`, { token: vendor }),
      (x) => x.body.status === 'failed',
    );
    assert.equal(failed.body.status, 'failed');
    assert.match(failed.body.lastError, /SendGrid answered 401: The provided authorization grant/);
    assert.equal(sendgrid.messages.filter((x) => x.to === 'nokey@ep.test').length, 0);
  });
});

describe('Mailgun', () => {
  test('a passwordless email code goes out through the messages API (payload form, EU region); sign-in finishes with it', async () => {
    const c = await t.call('POST', V2, {
      token: vendor,
      body: {
        payload: {
          provider: 'mailgun',
          secret: MG_KEY,
          domain: 'MG.example.test',
          region: 'EU',
          baseUrl: mailgun.baseUrl,
        },
      },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.provider, 'mailgun');
    assert.equal(c.body.domain, 'mg.example.test');
    assert.equal(c.body.region, 'eu');
    assert.equal(
      (
        await t.call('POST', '/identity/resources/configurations/v1/auth/strategies', {
          token: vendor,
          body: { Code: { active: true } },
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await t.call('POST', '/identity/resources/auth/v1/passwordless/code/prelogin', {
          body: { email: 'mg@ep.test' },
        })
      ).status,
      201,
    );
    const m = await mailgun.waitFor((x) => x.to === 'mg@ep.test');
    assert.match(m.from, /no-reply@mg\.example\.test/, "without a sender the domain's no-reply address is used");
    const p = await t.call('POST', '/identity/resources/auth/v1/passwordless/code/postlogin', {
      body: { email: 'mg@ep.test', token: codeIn(m) },
    });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.ok(p.body.accessToken);
    const d = await until(
      () => delivery('OTC', 'mg@ep.test'),
      (x) => x.status === 'sent',
    );
    assert.equal(d.provider, 'mailgun');
    assert.equal(d.providerMessageId, m.id);
  });

  test('a wrong domain is a permanent failure; switching back to SMTP clears the API settings', async () => {
    assert.equal(
      (
        await t.call('POST', V2, {
          token: vendor,
          body: { provider: 'mailgun', secret: MG_KEY, domain: 'other.example.test', baseUrl: mailgun.baseUrl },
        })
      ).status,
      201,
    );
    const r = await t.call('POST', '/identity/resources/messaging/v1/test', {
      token: vendor,
      body: { channel: 'email', to: 'dom@ep.test', type: 'OTC' },
    });
    const failed = await until(
      () => t.call('GET', `/identity/resources/messaging/v1/deliveries/${r.body.deliveryId}`, { token: vendor }),
      (x) => x.body.status === 'failed',
    );
    assert.equal(failed.body.status, 'failed');
    assert.match(failed.body.lastError, /Mailgun answered 404: Domain not found/);
    const smtp = await t.call('POST', V1, {
      token: vendor,
      body: { host: 'smtp.ep.test', port: 2525, senderEmail: 'a@ep.test', secret: 'x' },
    });
    assert.equal(smtp.status, 200, JSON.stringify(smtp.body));
    assert.equal(smtp.body.provider, 'smtp');
    assert.equal(smtp.body.domain, undefined);
    assert.equal(smtp.body.baseUrl, undefined);
  });
});

describe('bad configurations', () => {
  test('SES is answered 400 (not supported by this build); missing or bad fields name the field; nothing changes', async () => {
    const before = (await t.call('GET', V1, { token: vendor })).body;
    for (const body of [
      { provider: 'ses', secret: 'x', id: 'AKIA', region: 'us-east-1' },
      { payload: { provider: 'ses-role', secret: 'arn:aws:iam::1:role/x', region: 'eu-west-1' } },
    ]) {
      const r = await t.call('POST', V2, { token: vendor, body });
      assert.equal(r.status, 400);
      assert.equal(r.body.errorCode, 'GH-61006');
      assert.match(r.body.errors[0], /not supported by this build/);
    }
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ provider: 'mailgun', secret: MG_KEY }, /domain is required/],
      [{ provider: 'mailgun', secret: MG_KEY, domain: 'mg.example.test', region: 'ap' }, /region must be "us" or "eu"/],
      [{ provider: 'sendgrid' }, /secret is required/],
      [{ provider: 'postmark', secret: 'x' }, /provider must be one of/],
      [
        { payload: { provider: 'sendgrid', secret: 'x', senderEmail: 'not-an-email' } },
        /payload\.senderEmail must be an email address/,
      ],
      [{ provider: 'sendgrid', secret: 'x', baseUrl: 'ftp://x' }, /baseUrl must be an absolute http/],
    ];
    for (const [body, msg] of cases) {
      const r = await t.call('POST', V2, { token: vendor, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0], msg);
    }
    assert.deepEqual((await t.call('GET', V1, { token: vendor })).body, before);
    assert.equal((await t.call('POST', V2, { body: { provider: 'sendgrid', secret: 'x' } })).status, 401);
  });
});
