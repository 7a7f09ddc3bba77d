import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { startBrowserSdk } from '../helpers/sdk.ts';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
const U = '/identity/resources/users';
const PASSWORD = 'correct horse battery staple';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const signUp = (body: Record<string, unknown>) =>
  t.call('POST', `${U}/v1/signUp/username`, { body: { provider: 'local', ...body } });
const login = (body: Record<string, unknown>) => t.call('POST', '/identity/resources/auth/v1/user', { body });
const setSignups = (allowSignups: boolean) =>
  t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowSignups } });
/** Users and accounts in the store: what a refused request must leave as it was. */
const counts = async () =>
  (
    await t.db.query<{ users: number; tenants: number }>(
      'SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM tenants) AS tenants',
    )
  ).rows[0];
const deliveries = async () =>
  (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM message_deliveries')).rows[0].n;

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
});
after(async () => {
  await t?.close();
  await mailbox?.close();
});

describe('sign-up with a username', () => {
  test('is refused while allowSignups is off, as the email sign-up is, and creates nothing', async () => {
    const before = await counts();
    const r = await signUp({ username: 'early.bird', password: PASSWORD, companyName: 'Early' });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-62003');
    assert.deepEqual(await counts(), before);
    assert.equal((await setSignups(true)).status, 201);
  });

  let userId: string;
  let tenantId: string;
  test('201 SignUpResponseDto: a new account (companyName) and its first user, signed in at once, no email sent', async () => {
    const mails = await deliveries();
    const r = await signUp({ username: 'Solo.Sam', password: PASSWORD, name: 'Sam Solo', companyName: 'Solo Ltd' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['authResponse', 'shouldActivate', 'tenantId', 'userId']);
    assert.equal(r.body.shouldActivate, false);
    ({ userId, tenantId } = r.body);
    const a = r.body.authResponse;
    assert.equal(a.mfaRequired, false);
    assert.equal(a.userId, userId);
    assert.equal(a.emailVerified, false);
    assert.equal('userEmail' in a, false);
    assert.match(String(r.headers['set-cookie']), /gh_refresh=/);
    const c = claims(a.accessToken);
    assert.equal(c.sub, userId);
    assert.equal(c.tenantId, tenantId);
    assert.deepEqual(c.roles, ['admin']);
    assert.equal('email' in c, false, 'no email claim for a user without one');
    assert.equal(c.email_verified, false);
    const acc = await t.call('GET', `/tenants/resources/tenants/v2/${tenantId}`, { token: vendor });
    assert.equal(acc.body.name, 'Solo Ltd');
    assert.equal(acc.body.creatorEmail ?? null, null);
    assert.equal(await deliveries(), mails, 'nothing to email');
  });

  test('signs in by username and password (any case), with the normal tokens; a wrong password is 401', async () => {
    const r = await login({ username: 'solo.sam', password: PASSWORD });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(claims(r.body.accessToken).sub, userId);
    assert.equal('email' in claims(r.body.accessToken), false);
    const refreshed = await t.call('POST', '/identity/resources/auth/v1/user/token/refresh', {
      body: { refreshToken: r.body.refreshToken },
    });
    assert.ok([200, 201].includes(refreshed.status), JSON.stringify(refreshed.body));
    assert.equal((await login({ username: 'Solo.Sam', password: 'not the password' })).status, 401);
  });

  test('the user record reads with email "" (me, by id, list) and search finds them by username', async () => {
    const token = (await login({ username: 'solo.sam', password: PASSWORD })).body.accessToken;
    const me = await t.call('GET', `${U}/v2/me`, { token });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.email, '');
    assert.equal(me.body.username, 'Solo.Sam');
    const byId = await t.call('GET', `${U}/v1/${userId}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': tenantId },
    });
    assert.equal(byId.status, 200, JSON.stringify(byId.body));
    assert.equal(byId.body.email, '');
    const list = await t.call('GET', `${U}/v3`, { token: vendor, headers: { 'gatehouse-tenant-id': tenantId } });
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(
      list.body.items.map((u: { id: string; email: string }) => [u.id, u.email]),
      [[userId, '']],
    );
    const all = await t.call('GET', `${U}/v3?_sortBy=email&_limit=200`, { token: vendor });
    assert.equal(all.status, 200);
    for (const phrase of ['solo.s', 'sam', 'solo.sma']) {
      const s = await t.call('GET', `${U}/v1/query/phrase?_phrase=${phrase}`, { token: vendor });
      assert.equal(s.status, 200, JSON.stringify(s.body));
      assert.ok(
        s.body.items.some((u: { id: string }) => u.id === userId),
        phrase,
      );
    }
    // The list of addresses has no row for the missing primary one.
    const emails = await t.call('GET', `${U}/emails/v1?userIds=${userId}`, { token: vendor });
    assert.equal(emails.status, 200, JSON.stringify(emails.body));
    assert.deepEqual(emails.body.items, []);
    const mine = await t.call('GET', `${U}/emails/v1/me`, { token });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.deepEqual(mine.body, []);
  });

  test('a taken username is 409 in any case, also when an email user holds it; nothing is created', async () => {
    const made = await t.call('POST', `${U}/v1`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': tenantId },
      body: { email: 'holder@su-un.test', username: 'holder', name: 'H' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const before = await counts();
    for (const username of ['SOLO.SAM', 'Holder']) {
      const r = await signUp({ username, password: PASSWORD, companyName: 'Dup' });
      assert.equal(r.status, 409, username);
      assert.equal(r.body.errorCode, 'GH-42003');
    }
    assert.deepEqual(await counts(), before);
  });

  test('bad input is a 400 naming the field and changes nothing', async () => {
    const before = await counts();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ password: PASSWORD, companyName: 'X' }, /body\.username is required/],
      [{ username: 'nocompany', password: PASSWORD }, /body\.companyName is required/],
      [{ username: 'no.password', companyName: 'X' }, /body\.password is required/],
      [{ username: 'with.email', email: 'w@su-un.test', password: PASSWORD, companyName: 'X' }, /body\.email/],
      [{ username: 'bad name!', password: PASSWORD, companyName: 'X' }, /body\.username/],
      [{ username: 'weak.one', password: 'a', companyName: 'X' }, /password/i],
      [{ username: 'social.one', provider: 'google', password: PASSWORD, companyName: 'X' }, /provider/],
      [
        {
          username: 'climber',
          password: PASSWORD,
          companyName: 'X',
          roleIds: ['bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9'],
        },
        /roleIds/,
      ],
    ];
    for (const [body, rule] of cases) {
      const r = await signUp(body);
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors[0], rule);
    }
    assert.deepEqual(await counts(), before);
  });
});

describe('what needs an email, for a user without one', () => {
  test('a password reset by username answers as for an unknown user and sends nothing', async () => {
    assert.equal((await login({ username: 'solo.sam', password: PASSWORD })).status, 200, 'the user exists');
    const mails = await deliveries();
    const r = await t.call('POST', `${U}/v1/passwords/reset`, {
      body: { identifier: 'solo.sam', identifierType: 'username' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(await deliveries(), mails);
  });

  test('the vendor cannot email a verification (409 USER_HAS_NO_EMAIL) but may hand over a reset link', async () => {
    const u = (await login({ username: 'solo.sam', password: PASSWORD })).body.userId;
    const v = await t.call('POST', `${U}/v1/${u}/verification-email`, { token: vendor });
    assert.equal(v.status, 409, JSON.stringify(v.body));
    assert.equal(v.body.errorCode, 'GH-42013');
    const link = await t.call('POST', `${U}/v1/${u}/links/generate-password-reset-token`, { token: vendor });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const NEW = 'another horse battery staple';
    const reset = await t.call('POST', `${U}/v1/passwords/reset/verify`, {
      body: { userId: u, token: link.body.token, password: NEW },
    });
    assert.equal(reset.status, 201, JSON.stringify(reset.body));
    assert.equal((await login({ username: 'solo.sam', password: NEW })).status, 200);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/passwords/reset/verify`, {
          body: { userId: u, token: link.body.token, password: PASSWORD },
        })
      ).status,
      410,
    );
  });

  test('the username, their only identifier, cannot be removed (409), only replaced', async () => {
    const session = await login({ username: 'solo.sam', password: 'another horse battery staple' });
    const del = await t.call('DELETE', '/identity/resources/usernames/v1/Solo.Sam', {
      token: session.body.accessToken,
    });
    assert.equal(del.status, 409, JSON.stringify(del.body));
    const set = await t.call('POST', '/identity/resources/usernames/v1', {
      token: session.body.accessToken,
      body: { username: 'sam.solo' },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal((await login({ username: 'sam.solo', password: 'another horse battery staple' })).status, 200);
  });

  test('the user may add an email by the emailed code; it then becomes the email of the record, token and sign-in', async () => {
    const NEW = 'another horse battery staple';
    const token = (await login({ username: 'sam.solo', password: NEW })).body.accessToken;
    const ask = await t.call('POST', `${U}/v1/email/me`, { token, body: { email: 'sam@su-un.test' } });
    assert.equal(ask.status, 200, JSON.stringify(ask.body));
    const mail = await mailbox.waitFor((m) => m.to.includes('sam@su-un.test'));
    const ok = await t.call('POST', `${U}/v1/email/me/verify`, {
      token,
      body: { email: 'sam@su-un.test', code: codeIn(mail) },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const byEmail = await login({ email: 'sam@su-un.test', password: NEW });
    assert.equal(byEmail.status, 200, JSON.stringify(byEmail.body));
    assert.equal(claims(byEmail.body.accessToken).email, 'sam@su-un.test');
    assert.equal(byEmail.body.userEmail, 'sam@su-un.test');
  });
});

describe("the vendor's browser SDK (signUpUserWithUsername)", () => {
  let b: Awaited<ReturnType<typeof startBrowserSdk>>;
  before(async () => {
    b = await startBrowserSdk();
    assert.equal(
      (
        await b.t.call('POST', '/identity/resources/configurations/v1', {
          token: b.vendor,
          body: { allowSignups: true },
        })
      ).status,
      201,
    );
  });
  after(async () => b?.t.close());

  test('signs the new user in: the user (email ""), the account and the active account', async () => {
    const r = await b.sdk.api.auth.signUpUserWithUsername({
      username: 'sdk.sam',
      password: PASSWORD,
      companyName: 'SDK Ltd',
    });
    assert.equal(r.shouldActivate, false);
    assert.ok(r.user?.accessToken, JSON.stringify(r));
    assert.equal(r.user?.email, '');
    assert.equal((r.user as unknown as { username?: string }).username, 'sdk.sam');
    assert.equal(r.activeTenant?.tenantId, r.tenantId);
    assert.deepEqual(
      r.tenants?.map((x) => x.tenantId),
      [r.tenantId],
    );
  });
});
