import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../helpers/authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

/**
 * Changing who a user is needs the user's own session with a recent authentication (step-up otherwise), and access
 * tokens of ended sessions, removed members and ended impersonations stop working.
 */
let t: TestApp;
let vendor: string;
const SIGNIN = '/identity/resources/auth/v1/user';
const STEP_UP = '/identity/resources/auth/v1/user/step-up/generate';
const REFRESH = '/identity/resources/auth/v1/user/token/refresh';
const EMAILS = '/identity/resources/users/emails/v1';
const USERS = '/identity/resources/users/v2';
const IMPERSONATE = '/identity/resources/impersonation/v1';
const DELEGATE = '/identity/resources/auth/v1/delegation/token';
const IMP = 'fe.secure.impersonate.users';
const HUMAN_SESSION_REQUIRED = 'GH-20010';
const RECENT_AUTHENTICATION_REQUIRED = 'GH-20011';
const ACCESS_REVOKED = 'GH-20012';
const SESSION_REVOKED = 'GH-43003';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const H = (tenantId: string, userId?: string) => ({
  'gatehouse-tenant-id': tenantId,
  ...(userId ? { 'gatehouse-user-id': userId } : {}),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids: Record<string, string> = {};

/**
 * Every identity change the attacks made, with one token: add an email, verify it, make it primary, change the
 * password, change the email, enrol MFA, add a sign-in phone, create personal tokens, set a username, switch account.
 */
function identityChanges(userId: string) {
  return [
    ['POST', EMAILS, { email: `evil-${userId.slice(0, 8)}@attacker.test` }],
    ['POST', `${EMAILS}/verify`, { email: `evil-${userId.slice(0, 8)}@attacker.test`, code: '123456' }],
    ['POST', `${EMAILS}/me/primary`, { email: `evil-${userId.slice(0, 8)}@attacker.test` }],
    [
      'POST',
      '/identity/resources/users/v1/passwords/change',
      { password: 'guessed', newPassword: 'attacker chosen password 1' },
    ],
    ['POST', '/identity/resources/users/v1/email/me', { email: 'evil-change@attacker.test' }],
    ['POST', '/identity/resources/users/v1/mfa/authenticator/enroll', undefined],
    ['POST', '/identity/resources/users/phone-numbers/v1/preverify', { phoneNumber: '+15555550123' }],
    ['POST', '/identity/resources/users/v1/phone', { phoneNumber: '+15555550124' }],
    ['PUT', '/identity/resources/users/v2/me', { phoneNumber: '+15555550125' }],
    ['POST', '/identity/resources/users/api-tokens/v1', {}],
    ['POST', '/identity/resources/users/access-tokens/v1', { description: 'x' }],
    ['POST', '/identity/resources/usernames/v1', { username: `evil${userId.slice(0, 6)}` }],
    ['PUT', '/identity/resources/users/v1/tenant', { tenantId: 'beta' }],
  ] as const;
}

async function assertAllRefused(token: string, userId: string, code = HUMAN_SESSION_REQUIRED) {
  for (const [method, url, body] of identityChanges(userId)) {
    const r = await t.call(method, url, { token, body });
    // PUT users/v1/tenant and users/v2/me take user tokens only: a machine token may be refused for its kind first.
    if (r.status === 403 && r.body.errorCode === 'GH-20003') continue;
    assert.equal(r.status, 403, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    assert.equal(r.body.errorCode, code, `${method} ${url}: ${JSON.stringify(r.body)}`);
  }
  const { rows } = await t.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId]);
  assert.ok(!rows[0].email.includes('attacker'), 'the primary email did not change');
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['acme', 'beta']) await account(t, { id: tenantId });
  ids.alice = (await user(t, 'acme', { email: 'alice@acme.test' })).id; // acme's admin (first user)
  ids.bob = (await user(t, 'beta', { email: 'bob@beta.test' })).id; // beta's admin (first user), also a member of acme
  const joined = await t.call('POST', `/identity/resources/users/v1/${ids.bob}/tenant`, {
    token: vendor,
    body: { tenantId: 'acme' },
  });
  assert.equal(joined.status, 201, JSON.stringify(joined.body));
  ids.carol = (await user(t, 'acme', { email: 'carol@acme.test' })).id;
  ids.dave = (await user(t, 'acme', { email: 'dave@acme.test' })).id;
  assert.equal(
    (
      await t.call('POST', `/identity/resources/users/v1/${ids.dave}/tenant`, {
        token: vendor,
        body: { tenantId: 'beta' },
      })
    ).status,
    201,
  );
  ids.erin = (await user(t, 'acme', { email: 'erin@acme.test' })).id;
});
after(async () => t?.close());

describe("identity changes need the user's own session", () => {
  test("an impersonation token cannot change who the user is, nor reach the user's other accounts", async () => {
    const admin = await t.userToken({ sub: ids.alice, tenantId: 'acme', permissions: ['fe.*', IMP] });
    const imp = await t.call('POST', IMPERSONATE, { token: admin, body: { userId: ids.bob } });
    assert.equal(imp.status, 200, JSON.stringify(imp.body));
    const token = imp.body.accessToken as string;
    assert.deepEqual(claims(token).tenantIds, ['acme'], 'only the impersonated account');
    assert.equal((await t.call('GET', USERS, { token })).status, 200, 'reading still works');
    await assertAllRefused(token, ids.bob);
    const step = await t.call('POST', STEP_UP, { token, body: { password: PASSWORD } });
    assert.equal(step.status, 403);
    assert.equal(step.body.errorCode, HUMAN_SESSION_REQUIRED);
  });

  test("an impersonation is only of a user of the admin's own account, within the admin's permissions", async () => {
    const admin = await t.userToken({ sub: ids.alice, tenantId: 'acme', permissions: ['fe.*', IMP] });
    const other = await t.call('POST', IMPERSONATE, { token: admin, body: { userId: ids.bob, tenantId: 'beta' } });
    assert.equal(other.status, 403);
    const narrow = await t.userToken({ sub: ids.alice, tenantId: 'acme', permissions: [IMP, 'fe.secure.read.users'] });
    assert.equal((await t.call('POST', IMPERSONATE, { token: narrow, body: { userId: ids.bob } })).status, 403);
  });

  test('a delegated token cannot change who the user is', async () => {
    assert.equal(
      (
        await t.call('POST', '/identity/resources/configurations/v1/delegation', {
          token: vendor,
          body: { enabled: true },
        })
      ).status,
      200,
    );
    const perms = Object.fromEntries(
      (await t.call('GET', '/identity/resources/permissions/v1', { token: vendor })).body.map((x: any) => [
        x.key,
        x.id,
      ]),
    );
    const created = await t.call('POST', '/identity/resources/tenants/api-tokens/v1', {
      token: vendor,
      headers: H('acme'),
      body: { permissionIds: Object.values(perms) },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const svc = await t.call('POST', '/identity/resources/auth/v2/api-token', {
      body: { clientId: created.body.clientId, secret: created.body.secret },
    });
    const del = await t.call('POST', DELEGATE, { token: svc.body.access_token, body: { userId: ids.bob } });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    await assertAllRefused(del.body.access_token, ids.bob);
    assert.equal(
      (await t.call('POST', DELEGATE, { token: svc.body.access_token, body: { userId: ids.dave } })).status,
      200,
    );
    const outsider = (await user(t, 'beta', { email: 'frank@beta.test' })).id;
    assert.equal(
      (await t.call('POST', DELEGATE, { token: svc.body.access_token, body: { userId: outsider } })).status,
      404,
      'not a user of its account',
    );
    await assertAllRefused(svc.body.access_token, ids.bob);
  });

  test('a user API token holding only fe.secure.read.users cannot change its owner', async () => {
    const perms = Object.fromEntries(
      (await t.call('GET', '/identity/resources/permissions/v1', { token: vendor })).body.map((x: any) => [
        x.key,
        x.id,
      ]),
    );
    const created = await t.call('POST', '/identity/resources/users/api-tokens/v1', {
      token: vendor,
      headers: H('acme', ids.carol),
      body: { permissionIds: [perms['fe.secure.read.users']] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ex = await t.call('POST', '/identity/resources/auth/v2/api-token', {
      body: { clientId: created.body.clientId, secret: created.body.secret },
    });
    assert.equal(ex.status, 200, JSON.stringify(ex.body));
    const token = ex.body.access_token as string;
    assert.equal((await t.call('GET', `${EMAILS}/me`, { token })).status, 200, 'reading still works');
    await assertAllRefused(token, ids.carol);
    const reset = await t.call('POST', '/identity/resources/users/v1/passwords/change', {
      token,
      body: { password: PASSWORD, newPassword: 'attacker chosen password 2' },
    });
    assert.equal(reset.status, 403, 'not even with the current password');
  });

  test('a fresh sign-in may change identity; the environment token still may', async () => {
    const s = await signedIn(t, { email: 'carol@acme.test' });
    const add = await t.call('POST', EMAILS, { token: s.accessToken, body: { email: 'carol.two@acme.test' } });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    const byVendor = await t.call('POST', EMAILS, {
      token: vendor,
      headers: H('acme', ids.carol),
      body: { email: 'carol.three@acme.test' },
    });
    assert.equal(byVendor.status, 201, JSON.stringify(byVendor.body));
    const name = await t.call('PUT', '/identity/resources/users/v2/me', {
      token: s.accessToken,
      body: { name: 'Carol' },
    });
    assert.equal(name.status, 200, 'a name is not an identity');
  });
});

describe('recent authentication and step-up', () => {
  let old: TestApp;
  before(async () => {
    // auth_time is in whole seconds: 2 s leaves a fresh token a margin, and a 2.1 s old one is always too old.
    old = await startTestApp({ RECENT_AUTH_MAX_AGE: '2' });
    await account(old, { id: 'acme' });
    ids.gus = (await user(old, 'acme', { email: 'gus@acme.test' })).id;
  });
  after(async () => old?.close());

  test('an old session is refused until it re-authenticates; the step-up token keeps the session', async () => {
    const s = await signedIn(old, { email: 'gus@acme.test' });
    const sid = claims(s.accessToken).sid;
    await sleep(2100);
    const stale = await old.call('POST', EMAILS, { token: s.accessToken, body: { email: 'gus.two@acme.test' } });
    assert.equal(stale.status, 403);
    assert.equal(stale.body.errorCode, RECENT_AUTHENTICATION_REQUIRED);
    assert.match(stale.body.errors[0], /step-up\/generate/);
    const mfa = await old.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll', {
      token: s.accessToken,
    });
    assert.equal(mfa.body.errorCode, RECENT_AUTHENTICATION_REQUIRED);

    // A wrong password is refused and counts towards the lockout policy, as a failed sign-in does.
    const wrong = await old.call('POST', STEP_UP, { token: s.accessToken, body: { password: 'not it' } });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-42008');
    const { rows } = await old.db.query<{ failed_attempts: number }>(
      'SELECT failed_attempts FROM users WHERE id = $1',
      [ids.gus],
    );
    assert.equal(rows[0].failed_attempts, 1);
    assert.equal((await old.call('POST', STEP_UP, { token: s.accessToken, body: {} })).status, 400);

    const before = Math.floor(Date.now() / 1000);
    const step = await old.call('POST', STEP_UP, { token: s.accessToken, body: { password: PASSWORD } });
    assert.equal(step.status, 200, JSON.stringify(step.body));
    assert.equal(step.body.mfaRequired, false);
    assert.ok(step.body.refreshToken);
    const c = claims(step.body.accessToken);
    assert.equal(c.sid, sid, 'the same session');
    assert.ok(c.auth_time >= before, 'authenticated now');
    const added = await old.call('POST', EMAILS, {
      token: step.body.accessToken,
      body: { email: 'gus.two@acme.test' },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const after = await old.db.query<{ failed_attempts: number }>('SELECT failed_attempts FROM users WHERE id = $1', [
      ids.gus,
    ]);
    assert.equal(after.rows[0].failed_attempts, 0, 'a right password resets the count');

    // The refresh carries the session's authentication time, not its creation time; the replaced refresh token is spent.
    const refreshed = await old.call('POST', REFRESH, { body: { refreshToken: step.body.refreshToken } });
    assert.equal(refreshed.status, 201, JSON.stringify(refreshed.body));
    assert.equal(claims(refreshed.body.accessToken).auth_time, c.auth_time);
    assert.equal((await old.call('POST', REFRESH, { body: { refreshToken: s.refreshToken } })).status, 401);
  });

  test('step-up with a code of the authenticator app', async () => {
    const v = await old.vendorToken();
    const hal = (await user(old, 'acme', { email: 'hal@acme.test' })).id;
    const e = await old.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll', {
      token: v,
      headers: H('acme', hal),
    });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    const app = new Authenticator(new URL(e.body.uri).searchParams.get('secret')!);
    const enrolled = await old.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll/verify', {
      token: v,
      headers: H('acme', hal),
      body: { token: await app.code() },
    });
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
    let s = (await old.call('POST', SIGNIN, { body: { email: 'hal@acme.test', password: PASSWORD } })).body;
    if (s.mfaRequired) {
      const done = await old.call('POST', '/identity/resources/auth/v1/user/mfa/verify', {
        body: { mfaToken: s.mfaToken, value: await app.code() },
      });
      assert.ok(done.status < 300, JSON.stringify(done.body));
      s = done.body;
    }
    await sleep(2100);
    assert.equal(
      (await old.call('POST', EMAILS, { token: s.accessToken, body: { email: 'hal.two@acme.test' } })).status,
      403,
    );
    const wrong = await old.call('POST', STEP_UP, { token: s.accessToken, body: { code: '000000' } });
    assert.ok(wrong.status === 400 || wrong.status === 401, JSON.stringify(wrong.body));
    const step = await old.call('POST', STEP_UP, { token: s.accessToken, body: { code: await app.code() } });
    assert.equal(step.status, 200, JSON.stringify(step.body));
    assert.equal(claims(step.body.accessToken).sid, claims(s.accessToken).sid);
    assert.equal(
      (await old.call('POST', EMAILS, { token: step.body.accessToken, body: { email: 'hal.two@acme.test' } })).status,
      201,
    );
  });

  test('a password change that checks the current password needs no recent authentication', async () => {
    const s = await signedIn(old, { email: 'gus@acme.test' });
    await sleep(2100);
    const changed = await old.call('POST', '/identity/resources/users/v1/passwords/change', {
      token: s.accessToken,
      body: { password: PASSWORD, newPassword: 'another long passphrase 9' },
    });
    assert.equal(changed.status, 201, JSON.stringify(changed.body));
  });
});

describe('access tokens of ended sessions and removed members', () => {
  test("a member removed by the admin: the member's access token is refused at once", async () => {
    const dave = await signedIn(t, { email: 'dave@acme.test' });
    assert.equal(claims(dave.accessToken).tenantId, 'acme');
    assert.equal((await t.call('GET', USERS, { token: dave.accessToken })).status, 200);
    const admin = await signedIn(t, { email: 'alice@acme.test' });
    const removed = await t.call('DELETE', `/identity/resources/users/v1/${ids.dave}`, { token: admin.accessToken });
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    const r = await t.call('GET', USERS, { token: dave.accessToken });
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, ACCESS_REVOKED);
  });

  test("logout: the session's access token is refused", async () => {
    const erin = await signedIn(t, { email: 'erin@acme.test' });
    assert.equal((await t.call('GET', '/identity/resources/users/v2/me', { token: erin.accessToken })).status, 200);
    assert.equal((await t.call('POST', '/identity/resources/auth/v1/logout', { token: erin.accessToken })).status, 201);
    const r = await t.call('GET', '/identity/resources/users/v2/me', { token: erin.accessToken });
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, SESSION_REVOKED);
  });

  test('an impersonation whose act expired or was removed is refused', async () => {
    const first = await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: ids.erin } });
    assert.equal(first.status, 200);
    await t.db.query("UPDATE token_acts SET expires_at = now() - interval '1 second' WHERE id = $1", [
      first.body.impersonationId,
    ]);
    const expired = await t.call('GET', USERS, { token: first.body.accessToken });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.errorCode, SESSION_REVOKED);
    const second = await t.call('POST', IMPERSONATE, { token: vendor, body: { userId: ids.erin } });
    await t.db.query('DELETE FROM token_acts WHERE id = $1', [second.body.impersonationId]);
    assert.equal((await t.call('GET', USERS, { token: second.body.accessToken })).status, 401);
  });

  test('a cache hit runs no statement: only the first call of a token in 5 s reads its session', async () => {
    const erin = await signedIn(t, { email: 'erin@acme.test' });
    const db = t.db as unknown as { query: (...a: unknown[]) => Promise<unknown> };
    const original = db.query;
    // The jobs of the app run statements of their own meanwhile: only reads of the sessions table are counted.
    let reads = 0;
    db.query = (...a: unknown[]) => {
      if (/FROM sessions s\b/.test(String(a[0]))) reads += 1;
      return original.apply(t.db, a);
    };
    const sessionReads = async () => {
      reads = 0;
      assert.equal((await t.call('GET', '/identity/resources/users/v2/me', { token: erin.accessToken })).status, 200);
      return reads;
    };
    try {
      assert.equal(await sessionReads(), 1, 'a miss reads the session once');
      assert.equal(await sessionReads(), 0, 'a hit reads nothing');
      assert.equal(await sessionReads(), 0);
    } finally {
      db.query = original;
    }
  });

  test('a revocation made elsewhere (another instance) applies within 5 s', async () => {
    const erin = await signedIn(t, { email: 'erin@acme.test' });
    assert.equal((await t.call('GET', USERS, { token: erin.accessToken })).status, 200);
    // Another instance's revocation: the row changes without this process knowing.
    await t.db.query("UPDATE sessions SET revoked_at = now(), revoke_reason = 'elsewhere' WHERE id = $1", [
      claims(erin.accessToken).sid,
    ]);
    assert.equal((await t.call('GET', USERS, { token: erin.accessToken })).status, 200, 'within the cache window');
    await sleep(5100);
    assert.equal((await t.call('GET', USERS, { token: erin.accessToken })).status, 401);
  });
});
