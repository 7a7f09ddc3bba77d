import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';

const MAIL = '/identity/resources/mail/v1';
const SMS = '/identity/resources/configurations/v1/sms';
const MSG = '/identity/resources/messaging/v1';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let sms: SmsServer;

before(async () => {
  t = await startTestApp({ MESSAGING_MAX_ATTEMPTS: '2' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox({ credentials: { username: 'mailer', password: 'smtp-pass-123' } });
  sms = await startSmsServer();
});
after(async () => {
  await t?.close();
  await mailbox?.close();
  await sms?.close();
});

async function until(id: string, statuses: string[]): Promise<any> {
  for (let i = 0; i < 1000; i++) {
    const r = await t.call('GET', `${MSG}/deliveries/${id}`, { token: vendor });
    assert.equal(r.status, 200);
    if (statuses.includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`delivery ${id} never reached ${statuses.join('/')}`);
}

describe('development outbox (no provider configured)', () => {
  test('an email and an SMS go to the outbox, readable by the vendor; rendered from the default templates', async () => {
    const e = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'email', to: 'Dev@Example.test', type: 'OTC', vars: { code: '482913', name: '<Ada>' } },
    });
    assert.equal(e.status, 202, JSON.stringify(e.body));
    const s = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'sms', to: '+14155550100', type: 'OTC', vars: { code: '771122' } },
    });
    assert.equal(s.status, 202);
    assert.equal((await until(e.body.deliveryId, ['dev-outbox', 'failed'])).status, 'dev-outbox');
    assert.equal((await until(s.body.deliveryId, ['dev-outbox', 'failed'])).status, 'dev-outbox');
    const box = await t.call('GET', `${MSG}/dev-outbox?to=dev@example.test`, { token: vendor });
    assert.equal(box.status, 200);
    const mail = box.body.items[0];
    assert.equal(mail.subject, 'Your sign-in code: 482913');
    assert.ok(mail.html.includes('&lt;Ada&gt;'), 'values are HTML-escaped');
    assert.ok(mail.text.includes('Hello <Ada>'));
    assert.equal(codeIn(mail), '482913');
    const text = await t.call('GET', `${MSG}/dev-outbox?channel=sms`, { token: vendor });
    assert.match(text.body.items[0].text, /771122/);
  });

  test('the outbox and delivery routes need an environment token', async () => {
    const user = await t.userToken({ tenantId: 'x' });
    assert.equal((await t.call('GET', `${MSG}/dev-outbox`)).status, 401);
    assert.equal((await t.call('GET', `${MSG}/dev-outbox`, { token: user })).status, 403);
    assert.equal((await t.call('GET', `${MSG}/deliveries`, { token: user })).status, 403);
  });

  test('bad test sends are 400 naming the field', async () => {
    const a = await t.call('POST', `${MSG}/test`, { token: vendor, body: { channel: 'email', to: 'not-an-email' } });
    assert.equal(a.status, 400);
    assert.match(a.body.errors[0], /to must be an email/);
    const b = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'sms', to: '+1415', type: 'OTC' },
    });
    assert.equal(b.status, 400);
    const c = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'email', to: 'a@b.test', type: 'Nope' },
    });
    assert.equal(c.status, 400);
    assert.match(c.body.errors[0], /type must be/);
  });
});

describe('email configuration and SMTP delivery', () => {
  test('bad configuration is a 400 naming every field; nothing is stored', async () => {
    const r = await t.call('POST', `${MAIL}/configurations`, {
      token: vendor,
      body: { provider: 'sendgrid', host: 'bad host!', senderEmail: 'nope' },
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.context.fields.sort(), ['host', 'provider', 'senderEmail']);
    assert.equal((await t.call('GET', `${MAIL}/configurations`, { token: vendor })).status, 404);
  });

  test('create answers 201 without the password; GET never returns it; update answers 200 and keeps it', async () => {
    await mailbox.configure(t);
    const g = await t.call('GET', `${MAIL}/configurations`, { token: vendor });
    assert.equal(g.status, 200);
    assert.equal(g.body.host, '127.0.0.1');
    assert.equal(g.body.hasPassword, true);
    assert.ok(!JSON.stringify(g.body).includes('smtp-pass-123'));
    const rows = await t.db.query<{ password_enc: string }>('SELECT password_enc FROM mail_configurations');
    assert.ok(!rows.rows[0].password_enc.includes('smtp-pass-123'), 'the password is sealed at rest');
    const u = await t.call('POST', `${MAIL}/configurations`, {
      token: vendor,
      body: {
        host: '127.0.0.1',
        port: mailbox.port,
        senderEmail: 'no-reply@gatehouse.test',
        fromName: 'Gatehouse Test',
        username: 'mailer',
      },
    });
    assert.equal(u.status, 200);
    assert.equal(u.body.hasPassword, true);
  });

  test('a message reaches the SMTP server with the configured credentials, sender and both parts', async () => {
    const r = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: {
        channel: 'email',
        to: 'ada@example.test',
        type: 'MFAOTC',
        vars: { code: '135790', name: 'Ada Lovelace ✓' },
      },
    });
    assert.equal(r.status, 202);
    const m = await mailbox.waitFor((x) => x.to.includes('ada@example.test'));
    assert.deepEqual(m.auth, { username: 'mailer', password: 'smtp-pass-123' });
    assert.match(m.from, /Gatehouse Test/);
    assert.match(m.from, /no-reply@gatehouse\.test/);
    assert.equal(m.subject, 'Your verification code: 135790');
    assert.ok(m.html.includes('<strong>135790</strong>'));
    assert.ok(m.text.includes('Hello Ada Lovelace ✓'));
    const d = await until(r.body.deliveryId, ['sent']);
    assert.equal(d.provider, 'smtp');
    assert.equal(d.attempts, 1);
  });

  test('a stored template replaces the default; deleting it restores the default', async () => {
    const dflt = await t.call('GET', `${MAIL}/configs/ResetPassword/default`, { token: vendor });
    assert.equal(dflt.status, 200);
    assert.match(dflt.body.htmlTemplate, /\{\{link\}\}/);
    const put = await t.call('POST', `${MAIL}/configs/templates`, {
      token: vendor,
      body: {
        type: 'OTC',
        subject: 'Code {{code}} for {{email}}',
        htmlTemplate: '<p>Custom: {{code}}</p>',
        fromName: 'Custom Sender',
      },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const list = await t.call('GET', `${MAIL}/configs/templates?type=OTC`, { token: vendor });
    assert.equal(list.body.length, 1);
    await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'email', to: 'tpl@example.test', vars: { code: '246810' } },
    });
    const m = await mailbox.waitFor((x) => x.to.includes('tpl@example.test'));
    assert.equal(m.subject, 'Code 246810 for tpl@example.test');
    assert.equal(m.text, 'Custom: 246810');
    assert.match(m.from, /Custom Sender/);
    assert.equal((await t.call('DELETE', `${MAIL}/configs/templates/${put.body.id}`, { token: vendor })).status, 200);
    assert.equal((await t.call('DELETE', `${MAIL}/configs/templates/${put.body.id}`, { token: vendor })).status, 404);
    assert.equal((await t.call('GET', `${MAIL}/configs/templates?type=OTC`, { token: vendor })).body.length, 0);
    const bad = await t.call('POST', `${MAIL}/configs/templates`, {
      token: vendor,
      body: { type: 'Unknown', subject: 'x' },
    });
    assert.equal(bad.status, 400);
    assert.equal((await t.call('GET', `${MAIL}/configs/Unknown/default`, { token: vendor })).status, 400);
  });

  test('a transient SMTP failure is retried with backoff and then delivered', async () => {
    mailbox.failNext(1, 451);
    const r = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'email', to: 'retry@example.test' },
    });
    const m = await mailbox.waitFor((x) => x.to.includes('retry@example.test'));
    assert.ok(m);
    const d = await until(r.body.deliveryId, ['sent']);
    assert.equal(d.attempts, 2);
  });

  test('a permanent SMTP refusal is recorded as failed with the error, listed among failed deliveries', async () => {
    mailbox.failNext(1, 550);
    const r = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'email', to: 'gone@example.test' },
    });
    const d = await until(r.body.deliveryId, ['failed', 'sent']);
    assert.equal(d.status, 'failed');
    assert.match(d.lastError, /550/);
    const list = await t.call('GET', `${MSG}/deliveries?status=failed`, { token: vendor });
    assert.ok(list.body.items.some((x: any) => x.id === r.body.deliveryId));
    assert.equal(mailbox.to('gone@example.test').length, 0);
  });
});

describe('SMS configuration and Twilio delivery', () => {
  test('bad configuration is a 400; the token is sealed and never answered', async () => {
    const bad = await t.call('POST', SMS, { token: vendor, body: { provider: 'nexmo', baseUrl: 'ftp://x' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.context.fields.sort(), ['accountId', 'baseUrl', 'provider', 'senderName', 'token']);
    await sms.configure(t);
    const g = await t.call('GET', SMS, { token: vendor });
    assert.equal(g.status, 200);
    assert.equal(g.body.accountId, sms.accountId);
    assert.ok(!JSON.stringify(g.body).includes(sms.token));
  });

  test('an SMS reaches the provider API with basic auth, From and the rendered body', async () => {
    const r = await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'sms', to: '+14155550123', type: 'ResetPassword', vars: { code: '918273' } },
    });
    assert.equal(r.status, 202);
    const m = await sms.waitFor((x) => x.to === '+14155550123');
    assert.equal(m.from, '+15550001111');
    assert.equal(smsCode(m), '918273');
    const d = await until(r.body.deliveryId, ['sent']);
    assert.equal(d.providerMessageId, m.sid);
  });

  test('SMS templates: stored, default, all defaults, delete', async () => {
    const all = await t.call('GET', `${SMS}/templates/default/all`, { token: vendor });
    assert.ok(all.body.some((x: any) => x.type === 'OTC'));
    const c = await t.call('POST', `${SMS}/templates/OTC`, { token: vendor, body: { body: 'Login code: {{code}}' } });
    assert.equal(c.status, 201);
    assert.equal(
      (await t.call('POST', `${SMS}/templates/OTC`, { token: vendor, body: { body: 'Your login code: {{code}}' } }))
        .status,
      200,
    );
    assert.equal(
      (await t.call('GET', `${SMS}/templates/OTC`, { token: vendor })).body.body,
      'Your login code: {{code}}',
    );
    await t.call('POST', `${MSG}/test`, {
      token: vendor,
      body: { channel: 'sms', to: '+14155550124', vars: { code: '555111' } },
    });
    const m = await sms.waitFor((x) => x.to === '+14155550124');
    assert.equal(m.body, 'Your login code: 555111');
    assert.equal((await t.call('DELETE', `${SMS}/templates/OTC`, { token: vendor })).status, 200);
    assert.equal((await t.call('GET', `${SMS}/templates/OTC`, { token: vendor })).status, 404);
    assert.match((await t.call('GET', `${SMS}/templates/OTC/default`, { token: vendor })).body.body, /\{\{code\}\}/);
    assert.equal((await t.call('POST', `${SMS}/templates/Bogus`, { token: vendor, body: { body: 'x' } })).status, 400);
  });

  test('a 4xx answer from the provider fails at once; a 5xx is retried until attempts run out', async () => {
    sms.failNext(1, 400);
    const a = await t.call('POST', `${MSG}/test`, { token: vendor, body: { channel: 'sms', to: '+14155550125' } });
    const da = await until(a.body.deliveryId, ['failed', 'sent']);
    assert.equal(da.status, 'failed');
    assert.equal(da.attempts, 1);
    assert.match(da.lastError, /400/);
    sms.failNext(2, 503);
    const b = await t.call('POST', `${MSG}/test`, { token: vendor, body: { channel: 'sms', to: '+14155550126' } });
    const db = await until(b.body.deliveryId, ['failed', 'sent']);
    assert.equal(db.status, 'failed');
    assert.equal(db.attempts, 2);
    assert.match(db.lastError, /503/);
  });
});

describe('production without a provider', () => {
  test('the send is recorded as failed with a clear error and the outbox is off', async () => {
    const p = await startTestApp({ NODE_ENV: 'production' });
    try {
      const v = await p.vendorToken();
      const r = await p.call('POST', `${MSG}/test`, { token: v, body: { channel: 'email', to: 'prod@example.test' } });
      assert.equal(r.status, 202);
      let d: any;
      for (let i = 0; i < 500; i++) {
        d = (await p.call('GET', `${MSG}/deliveries/${r.body.deliveryId}`, { token: v })).body;
        if (d.status === 'failed') break;
        await new Promise((res) => setTimeout(res, 20));
      }
      assert.equal(d.status, 'failed');
      assert.match(d.lastError, /No email provider is configured/);
      assert.equal((await p.call('GET', `${MSG}/dev-outbox`, { token: v })).status, 404);
    } finally {
      await p.close();
    }
  });
});
