import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createContext, LOG_REDACT } from '../../src/context.ts';
import { buildApp } from '../../src/routes.ts';
import type { ClosableDb } from '../../src/storage/db.ts';
import { openTestDb } from '../helpers/db.ts';
import { VENDOR } from '../helpers/harness.ts';

/**
 * A local server speaking reCAPTCHA's siteverify protocol: POST application/x-www-form-urlencoded
 * `secret, response, remoteip`, answered with `{success, score, action, challenge_ts, hostname, 'error-codes'}`.
 * Tokens are single use (a second use is `timeout-or-duplicate`), a wrong secret is `invalid-input-secret`, an unknown
 * token `invalid-input-response`. `mode`: `down` answers 500, `slow` never answers (until closed), `garbage` answers
 * a non-JSON body.
 */
async function startSiteverify(secret: string) {
  const issued = new Map<string, number | null>();
  const used = new Set<string>();
  const requests: {
    contentType: string | undefined;
    secret: string | null;
    response: string | null;
    remoteip: string | null;
  }[] = [];
  const pending: ServerResponse[] = [];
  let mode: 'ok' | 'down' | 'slow' | 'garbage' = 'ok';
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/recaptcha/api/siteverify') return send(res, 404, {});
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      requests.push({
        contentType: req.headers['content-type'],
        secret: form.get('secret'),
        response: form.get('response'),
        remoteip: form.get('remoteip'),
      });
      if (mode === 'down') return send(res, 500, { error: 'internal' });
      if (mode === 'slow') return void pending.push(res);
      if (mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>maintenance</html>');
      }
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded')
        return send(res, 200, { success: false, 'error-codes': ['bad-request'] });
      if (!form.get('secret')) return send(res, 200, { success: false, 'error-codes': ['missing-input-secret'] });
      if (form.get('secret') !== secret)
        return send(res, 200, { success: false, 'error-codes': ['invalid-input-secret'] });
      const token = form.get('response');
      if (!token) return send(res, 200, { success: false, 'error-codes': ['missing-input-response'] });
      if (!issued.has(token)) return send(res, 200, { success: false, 'error-codes': ['invalid-input-response'] });
      if (used.has(token)) return send(res, 200, { success: false, 'error-codes': ['timeout-or-duplicate'] });
      used.add(token);
      const score = issued.get(token);
      send(res, 200, {
        success: true,
        ...(score === null ? {} : { score, action: 'login' }),
        challenge_ts: new Date().toISOString(),
        hostname: 'localhost',
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/recaptcha/api/siteverify`,
    requests,
    /** A fresh token the server accepts once with this score (null: a v2-style answer without a score). */
    token(score: number | null = 0.9): string {
      const token = `tok-${randomBytes(12).toString('base64url')}`;
      issued.set(token, score);
      return token;
    },
    setMode(m: typeof mode) {
      mode = m;
    },
    async close() {
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const SECRET = `captcha-secret-${randomBytes(8).toString('hex')}`;
const SITE_KEY = '6LcTestSiteKey-abcdefghijklmnopqrstuvw';
const POLICY = '/identity/resources/configurations/v1/captcha-policy';
const LOGIN = '/identity/resources/auth/v1/user';
const U = '/identity/resources/users/v1';
const PASSWORD = 'correct horse battery staple';

let provider: Awaited<ReturnType<typeof startSiteverify>>;
let app: Awaited<ReturnType<typeof buildApp>>;
let ctx: Awaited<ReturnType<typeof createContext>>;
let db: ClosableDb;
let dataDir: string;
let vendor: string;
const logLines: string[] = [];

async function call(
  method: string,
  url: string,
  o: { token?: string; body?: unknown; ip?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.inject({
    method: method as 'GET',
    url,
    headers,
    payload: o.body === undefined ? undefined : JSON.stringify(o.body),
    ...(o.ip ? { remoteAddress: o.ip } : {}),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}
const login = (email: string, extra: Record<string, unknown> = {}, ip?: string) =>
  call('POST', LOGIN, { body: { email, password: PASSWORD, ...extra }, ip });
const policy = (body: Record<string, unknown>, method = 'PUT') => call(method, POLICY, { token: vendor, body });
const enable = (extra: Record<string, unknown> = {}) =>
  policy({ enabled: true, siteKey: SITE_KEY, secretKey: SECRET, minScore: 0.5, ...extra });

async function user(email: string): Promise<string> {
  const r = await call('POST', U, {
    token: vendor,
    body: { email, password: PASSWORD },
    headers: { 'gatehouse-tenant-id': 'cap-acc' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

before(async () => {
  provider = await startSiteverify(SECRET);
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-captcha-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    GATEHOUSE_ENCRYPTION_KEY: 'test-encryption-key',
    GATEHOUSE_CLIENT_ID: VENDOR.clientId,
    GATEHOUSE_API_KEY: VENDOR.secret,
    JOB_POLL_MS: '20',
    CODE_RATE_LIMIT_PER_IP: '1000',
    LOGIN_RATE_LIMIT_PER_IP: '1000',
    LOGIN_RATE_LIMIT_PER_IDENTIFIER: '1000',
    CAPTCHA_VERIFY_URL: provider.url,
  });
  db = await openTestDb();
  // Every log line at the most verbose level, to check that neither the secret key nor a token is ever written.
  const log = pino(
    { level: 'trace', redact: { paths: LOG_REDACT, censor: '[redacted]' } },
    { write: (line: string) => void logLines.push(line) },
  );
  ctx = await createContext(config, db, log);
  await ctx.environment.bootstrap({ clientId: VENDOR.clientId, apiKey: VENDOR.secret });
  app = await buildApp(ctx);
  ctx.jobs.start();
  const v = await call('POST', '/auth/vendor', { body: VENDOR });
  vendor = v.body.token;
  assert.equal(
    (
      await call('POST', '/tenants/resources/tenants/v1', {
        token: vendor,
        body: { tenantId: 'cap-acc', name: 'Captcha Inc' },
      })
    ).status,
    201,
  );
});
after(async () => {
  await app?.close();
  await ctx?.jobs.stop();
  await db?.close();
  await provider?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const errorOf = (r: { status: number; body: any }) => `${r.status} ${r.body?.errorCode}`;

describe('policy management', () => {
  test('without a policy: GET is 404, the public view says disabled, sign-in needs no token and nothing is verified', async () => {
    await user('plain@cap.test');
    const g = await call('GET', POLICY, { token: vendor });
    assert.equal(errorOf(g), '404 GH-43105');
    const pub = await call('GET', `${POLICY}/public`);
    assert.equal(pub.status, 200);
    assert.deepEqual(pub.body, { enabled: false });
    assert.equal((await login('plain@cap.test')).status, 200);
    assert.equal(provider.requests.length, 0);
  });

  test('bad input is a 400 naming the field and the rule, and stores nothing; the routes need an environment token', async () => {
    const good = { enabled: true, siteKey: SITE_KEY, secretKey: SECRET, minScore: 0.5 };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...good, minScore: 2 }, /minScore must be <= 1/],
      [{ ...good, minScore: -0.1 }, /minScore must be >= 0/],
      [{ ...good, minScore: '0.5' }, /minScore must be number/],
      [{ enabled: true, secretKey: SECRET, minScore: 0.5 }, /siteKey is required/],
      [{ ...good, secretKey: '' }, /secretKey must NOT have fewer than 1 characters/],
      [{ ...good, siteKey: 'has space' }, /siteKey must match pattern/],
      [{ ...good, enabled: 'yes' }, /enabled must be boolean/],
      [
        { ...good, ignoredEmails: ['ok@cap.test', 'not-an-email'] },
        /body\.ignoredEmails\.1 must be an email address or \*@domain/,
      ],
      [{ ...good, ignoredEmails: ['*@x'] }, /body\.ignoredEmails\.0 must be an email address or \*@domain/],
      [{ ...good, ignoredEmails: ['a*b@cap.test'] }, /body\.ignoredEmails\.0 must be/],
      [{ ...good, ignoredEmails: ['@cap.test'] }, /body\.ignoredEmails\.0 must be/],
      [{ ...good, ignoredEmails: ['x'.repeat(321)] }, /body\.ignoredEmails\.0 must NOT have more than 320 characters/],
    ];
    for (const [body, rule] of cases) {
      for (const method of ['POST', 'PUT']) {
        const r = await policy(body, method);
        assert.equal(r.status, 400, `${method} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.errorCode, 'GH-10001');
        assert.match(r.body.errors.join(' '), rule);
      }
    }
    assert.equal((await call('GET', POLICY, { token: vendor })).status, 404, 'nothing stored');
    assert.equal((await call('POST', POLICY, { body: good })).status, 401);
    assert.equal((await call('GET', POLICY)).status, 401);
    assert.equal((await call('PUT', POLICY, { body: good })).status, 401);
  });

  test('POST creates (201), a second POST is 409, PUT replaces (an omitted ignoredEmails is kept); the secret is sealed at rest', async () => {
    const c = await policy(
      {
        enabled: false,
        siteKey: SITE_KEY,
        secretKey: SECRET,
        minScore: 0.7,
        ignoredEmails: ['VIP@Cap.test', '*@QA.cap.test', 'vip@cap.test'],
      },
      'POST',
    );
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.deepEqual(
      { ...c.body, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
        enabled: false,
        siteKey: SITE_KEY,
        secretKey: SECRET,
        minScore: 0.7,
        ignoredEmails: ['vip@cap.test', '*@qa.cap.test'],
      },
    );
    assert.match(c.body.id, /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(c.body.createdAt)));
    assert.equal(
      errorOf(await policy({ enabled: true, siteKey: 'other', secretKey: 'other', minScore: 0.1 }, 'POST')),
      '409 GH-43104',
    );

    const u = await policy({ enabled: false, siteKey: `${SITE_KEY}2`, secretKey: SECRET, minScore: 0.5 });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    assert.equal(u.body.id, c.body.id);
    assert.equal(u.body.createdAt, c.body.createdAt);
    assert.equal(u.body.siteKey, `${SITE_KEY}2`);
    assert.equal(u.body.minScore, 0.5);
    assert.deepEqual(u.body.ignoredEmails, ['vip@cap.test', '*@qa.cap.test']);
    const g = await call('GET', POLICY, { token: vendor });
    assert.deepEqual(g.body, u.body);

    const { rows } = await db.query<{ secret_key_enc: string }>('SELECT secret_key_enc FROM captcha_policies');
    assert.equal(rows.length, 1);
    assert.ok(!rows[0].secret_key_enc.includes(SECRET));
    assert.match(rows[0].secret_key_enc, /^v1\./);

    const pub = await call('GET', `${POLICY}/public`);
    assert.deepEqual(pub.body, { enabled: false, siteKey: `${SITE_KEY}2` });
  });

  test('a disabled policy checks nothing', async () => {
    const before = provider.requests.length;
    assert.equal((await login('plain@cap.test')).status, 200);
    assert.equal((await login('plain@cap.test', { recaptchaToken: 'anything' })).status, 200);
    assert.equal(provider.requests.length, before, 'no call to the provider');
  });
});

describe('enforcement', () => {
  before(async () => {
    const r = await enable({ ignoredEmails: [] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const pub = await call('GET', `${POLICY}/public`);
    assert.deepEqual(pub.body, { enabled: true, siteKey: SITE_KEY });
    // The login-box configuration shows the site key too, and only it.
    const box = await call('GET', '/identity/resources/configurations/v1/public');
    assert.deepEqual(box.body.captcha, { enabled: true, siteKey: SITE_KEY });
  });

  test('password sign-in: a missing token is CAPTCHA_REQUIRED without a provider call; an accepted token passes once', async () => {
    const before = provider.requests.length;
    const none = await login('plain@cap.test');
    assert.equal(errorOf(none), '400 GH-43101');
    assert.match(none.body.errors[0], /recaptchaToken is required/);
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: '' })), '400 GH-43101');
    assert.equal(
      errorOf(await call('POST', `/frontegg${LOGIN}`, { body: { email: 'plain@cap.test', password: PASSWORD } })),
      '400 GH-43101',
    );
    // Malformed input stays a validation error and costs no provider call.
    assert.equal(
      errorOf(await call('POST', LOGIN, { body: { email: 'plain@cap.test', recaptchaToken: provider.token() } })),
      '400 GH-10001',
    );
    assert.equal(provider.requests.length, before);

    const token = provider.token(0.9);
    const ok = await login('plain@cap.test', { recaptchaToken: token }, '203.0.113.7');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.ok(ok.body.accessToken);
    const sent = provider.requests[provider.requests.length - 1];
    assert.deepEqual(sent, {
      contentType: 'application/x-www-form-urlencoded',
      secret: SECRET,
      response: token,
      remoteip: '203.0.113.7',
    });

    const replay = await login('plain@cap.test', { recaptchaToken: token });
    assert.equal(errorOf(replay), '400 GH-43102');
    assert.match(replay.body.errors[0], /timeout-or-duplicate/);
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: 'forged-token' })), '400 GH-43102');
    // The captcha passes, then the password check refuses as usual.
    assert.equal(
      errorOf(await login('plain@cap.test', { password: 'wrong password', recaptchaToken: provider.token() })),
      '401 GH-43001',
    );
  });

  test('a score below minScore is refused; minScore itself and an answer without a score (v2, Turnstile) pass', async () => {
    const low = await login('plain@cap.test', { recaptchaToken: provider.token(0.3) });
    assert.equal(errorOf(low), '400 GH-43102');
    assert.match(low.body.errors[0], /minScore/);
    assert.equal((await login('plain@cap.test', { recaptchaToken: provider.token(0.5) })).status, 200);
    assert.equal((await login('plain@cap.test', { recaptchaToken: provider.token(null) })).status, 200);
    assert.equal((await enable({ minScore: 0 })).status, 200);
    assert.equal((await login('plain@cap.test', { recaptchaToken: provider.token(0) })).status, 200);
    assert.equal((await enable({ minScore: 1 })).status, 200);
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: provider.token(0.99) })), '400 GH-43102');
    assert.equal((await enable()).status, 200);
  });

  test('sign-up: refused without a token and creates nothing; accepted with one', async () => {
    assert.equal(
      (await call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowSignups: true } }))
        .status,
      201,
    );
    const body = { provider: 'local', email: 'founder@signup.cap.test', password: PASSWORD, companyName: 'Founders' };
    assert.equal(errorOf(await call('POST', `${U}/signUp`, { body })), '400 GH-43101');
    assert.equal(
      errorOf(await call('POST', `${U}/signUp`, { body: { ...body, recaptchaToken: provider.token(0.1) } })),
      '400 GH-43102',
    );
    assert.notEqual(
      (await call('GET', `${U}/email?email=founder@signup.cap.test`, { token: vendor })).status,
      200,
      'no user created',
    );
    const ok = await call('POST', `${U}/signUp`, { body: { ...body, recaptchaToken: provider.token() } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));

    // Activation of that user is protected too (by user id).
    const link = await call('POST', `${U}/${ok.body.userId}/links/generate-activation-token`, { token: vendor });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const activation = { userId: ok.body.userId, token: link.body.token };
    assert.equal(errorOf(await call('POST', `${U}/activate`, { body: activation })), '400 GH-43101');
    const a = await call('POST', `${U}/activate`, { body: { ...activation, recaptchaToken: provider.token() } });
    assert.equal(a.status, 200, JSON.stringify(a.body));
  });

  test('passwordless pre-login (magic link, email code) needs a token', async () => {
    const s = await call('POST', '/identity/resources/configurations/v1/auth/strategies', {
      token: vendor,
      body: { MagicLink: { active: true }, Code: { active: true } },
    });
    assert.equal(s.status, 200, JSON.stringify(s.body));
    const P = '/identity/resources/auth/v1/passwordless';
    assert.equal(
      errorOf(await call('POST', `${P}/magiclink/prelogin`, { body: { email: 'plain@cap.test' } })),
      '400 GH-43101',
    );
    assert.equal(
      errorOf(
        await call('POST', `${P}/code/prelogin`, { body: { email: 'plain@cap.test', recaptchaToken: 'forged' } }),
      ),
      '400 GH-43102',
    );
    assert.equal(
      (
        await call('POST', `${P}/magiclink/prelogin`, {
          body: { email: 'plain@cap.test', recaptchaToken: provider.token() },
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await call('POST', `${P}/code/prelogin`, {
          body: { email: 'plain@cap.test', recaptchaToken: provider.token() },
        })
      ).status,
      201,
    );
  });

  test('password reset requests need a token (the field is read although the reset body does not declare it)', async () => {
    assert.equal(
      errorOf(await call('POST', `${U}/passwords/reset`, { body: { email: 'plain@cap.test' } })),
      '400 GH-43101',
    );
    assert.equal(
      errorOf(
        await call('POST', '/identity/resources/users/v2/passwords/reset/email', {
          body: { identifier: 'plain@cap.test' },
        }),
      ),
      '400 GH-43101',
    );
    assert.equal(
      (
        await call('POST', `${U}/passwords/reset`, {
          body: { email: 'plain@cap.test', recaptchaToken: provider.token() },
        })
      ).status,
      201,
    );
  });

  test('ignoredEmails: exact addresses (any case) and *@domain (that domain only) skip the check', async () => {
    await user('vip@cap.test');
    await user('tester@qa.cap.test');
    await user('other@cap.test');
    await user('tester@sub.qa.cap.test');
    assert.equal((await enable({ ignoredEmails: ['VIP@cap.test', '*@qa.cap.test'] })).status, 200);
    const before = provider.requests.length;
    assert.equal((await login('Vip@Cap.Test')).status, 200);
    assert.equal((await login('tester@qa.cap.test')).status, 200);
    assert.equal(
      (await login('tester@QA.cap.test', { recaptchaToken: 'forged' })).status,
      200,
      'an exempt email is not checked at all',
    );
    assert.equal(provider.requests.length, before);
    assert.equal(errorOf(await login('other@cap.test')), '400 GH-43101');
    assert.equal(errorOf(await login('tester@sub.qa.cap.test')), '400 GH-43101');
    // Exempt activation, found by user id: a user who signs up under the exempt domain activates without a token.
    const su = await call('POST', `${U}/signUp`, {
      body: { provider: 'local', email: 'new@qa.cap.test', password: PASSWORD, companyName: 'QA' },
    });
    assert.equal(su.status, 201, JSON.stringify(su.body));
    const link = await call('POST', `${U}/${su.body.userId}/links/generate-activation-token`, { token: vendor });
    assert.equal(
      (await call('POST', `${U}/activate`, { body: { userId: su.body.userId, token: link.body.token } })).status,
      200,
    );
    assert.equal((await enable({ ignoredEmails: [] })).status, 200);
    assert.equal(errorOf(await login('vip@cap.test')), '400 GH-43101');
  });

  test('provider failures fail closed: 503 CAPTCHA_UNAVAILABLE (down, not JSON, no answer in time, our secret refused)', async () => {
    provider.setMode('down');
    const down = await login('plain@cap.test', { recaptchaToken: provider.token() });
    assert.equal(errorOf(down), '503 GH-43103');
    assert.equal(down.headers['retry-after'], '5');
    provider.setMode('garbage');
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: provider.token() })), '503 GH-43103');
    provider.setMode('slow');
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: provider.token() })), '503 GH-43103');
    provider.setMode('ok');

    assert.equal((await enable({ secretKey: 'a-wrong-secret' })).status, 200);
    assert.equal(errorOf(await login('plain@cap.test', { recaptchaToken: provider.token() })), '503 GH-43103');
    assert.ok(logLines.some((l) => l.includes('refused the policy') && l.includes('invalid-input-secret')));
    assert.equal((await enable()).status, 200);
    assert.equal((await login('plain@cap.test', { recaptchaToken: provider.token() })).status, 200);
  });

  test('disabling the policy applies at once: no token needed, no provider call', async () => {
    assert.equal((await policy({ enabled: false, siteKey: SITE_KEY, secretKey: SECRET, minScore: 0.5 })).status, 200);
    const before = provider.requests.length;
    assert.equal((await login('plain@cap.test')).status, 200);
    assert.equal((await call('POST', `${U}/passwords/reset`, { body: { email: 'plain@cap.test' } })).status, 201);
    assert.equal(provider.requests.length, before);
    assert.deepEqual((await call('GET', `${POLICY}/public`)).body, { enabled: false, siteKey: SITE_KEY });
  });
});

describe('secrecy', () => {
  test('the secret key never appears in the public route, and neither it nor a token in any log line', async () => {
    assert.equal((await enable()).status, 200);
    const pub = await call('GET', `${POLICY}/public`);
    assert.deepEqual(Object.keys(pub.body).sort(), ['enabled', 'siteKey']);
    assert.ok(!JSON.stringify(pub.body).includes(SECRET));
    const token = provider.token();
    assert.equal((await login('plain@cap.test', { recaptchaToken: token })).status, 200);
    const all = logLines.join('\n');
    assert.ok(logLines.length > 10 && all.includes('captcha provider unavailable'), 'the log was captured');
    assert.ok(!all.includes(SECRET), 'no secret key in the logs');
    assert.ok(!all.includes(token) && !/tok-[A-Za-z0-9_-]{16}/.test(all), 'no token in the logs');
  });
});
