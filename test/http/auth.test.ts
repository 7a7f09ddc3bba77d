import assert from 'node:assert/strict';
import * as argon2 from '@node-rs/argon2';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const A = '/identity/resources/auth/v1';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const login = (email: string, password = PASSWORD, headers: Record<string, string> = {}) =>
  t.call('POST', `${A}/user`, { body: { email, password }, headers });
const refresh = (refreshToken: string) => t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken } });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'a-one' });
  await account(t, { id: 'a-two' });
});
after(async () => t?.close());

describe('the full journey', () => {
  test('create account and user, sign in, call a user route, refresh twice, replay the first refresh token', async () => {
    const { id } = await user(t, 'a-one', { email: 'journey@one.test' });
    const r = await login('journey@one.test');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaRequired, false);
    assert.equal(r.body.userId, id);
    assert.equal(r.body.expiresIn, 300);
    assert.match(String(r.headers['set-cookie']), /^gh_refresh=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    const c = claims(r.body.accessToken);
    assert.equal(c.type, 'userToken');
    assert.equal(c.sub, id);
    assert.equal(c.tenantId, 'a-one');
    assert.deepEqual(c.tenantIds, ['a-one']);
    assert.deepEqual(c.roles, ['admin']);
    assert.ok(c.permissions.includes('fe.account-settings.delete.account'));
    assert.ok(c.sid && c.iss && c.aud && c.exp - c.iat === 300);

    const me = await t.call('GET', '/identity/resources/users/v2/me', { token: r.body.accessToken });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, 'journey@one.test');
    assert.ok(me.body.lastLogin);

    const r1 = await refresh(r.body.refreshToken);
    assert.equal(r1.status, 201, JSON.stringify(r1.body));
    assert.notEqual(r1.body.refreshToken, r.body.refreshToken);
    assert.equal(claims(r1.body.accessToken).sid, c.sid);
    const r2 = await refresh(r1.body.refreshToken);
    assert.equal(r2.status, 201);

    const replay = await refresh(r.body.refreshToken);
    assert.equal(replay.status, 401);
    assert.equal(replay.body.errorCode, 'GH-43003');
    const after = await refresh(r2.body.refreshToken);
    assert.equal(after.status, 401, 'the whole session is revoked by the replay');
  });

  test('concurrent refreshes with one token: exactly one rotates, the others are replays that end the session', async () => {
    // Only PostgreSQL runs them truly at once (PGlite serialises statements); there a missing row lock let several
    // succeed and split one session into several refresh chains.
    await user(t, 'a-one', { email: 'race@one.test' });
    for (let round = 0; round < 4; round++) {
      const r = await login('race@one.test');
      const answers = await Promise.all([1, 2, 3].map(() => refresh(r.body.refreshToken)));
      const winners = answers.filter((a) => a.status === 201);
      assert.equal(winners.length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
      assert.ok(answers.every((a) => a.status === 201 || a.status === 401));
      assert.equal((await refresh(winners[0].body.refreshToken)).status, 401, 'the replays revoked the session');
    }
  });

  test('the refresh cookie works without a body; logout ends the session', async () => {
    await user(t, 'a-one', { email: 'cookie@one.test' });
    const r = await login('cookie@one.test');
    const cookie = String(r.headers['set-cookie']).split(';')[0];
    const viaCookie = await t.call('POST', `${A}/user/token/refresh`, { headers: { cookie } });
    assert.equal(viaCookie.status, 201, JSON.stringify(viaCookie.body));
    const out = await t.call('POST', `${A}/logout`, { body: { refreshToken: viaCookie.body.refreshToken } });
    assert.equal(out.status, 201);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    assert.equal((await refresh(viaCookie.body.refreshToken)).status, 401);
  });

  test('garbage, missing and unknown refresh tokens are 401s', async () => {
    assert.equal((await refresh('garbage')).status, 401);
    assert.equal((await t.call('POST', `${A}/user/token/refresh`, { body: {} })).status, 401);
    assert.equal((await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: 5 } })).status, 400);
    // A refresh cookie that is not valid percent-encoding is an unknown token, not a server error.
    const malformed = { cookie: 'gh_refresh=%E0%A4%A' };
    assert.equal((await t.call('POST', `${A}/user/token/refresh`, { headers: malformed })).status, 401);
    assert.ok((await t.call('POST', `${A}/logout`, { headers: malformed })).status < 500);
  });
});

describe('password sign-in rules', () => {
  test('unknown email and wrong password answer the same error', async () => {
    await user(t, 'a-one', { email: 'same@one.test' });
    const a = await login('same@one.test', 'wrong password here');
    const b = await login('nobody@one.test', 'wrong password here');
    assert.equal(a.status, 401);
    assert.deepEqual(a.body, b.body);
    assert.equal(a.body.errorCode, 'GH-43001');
  });

  test('missing fields are 400s', async () => {
    assert.equal((await t.call('POST', `${A}/user`, { body: { email: 'x@y.test' } })).status, 400);
    const r = await t.call('POST', `${A}/user`, { body: { password: 'x' } });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /email or body\.username/);
  });

  test('lockout after the policy number of failures; unlock restores sign-in', async () => {
    const { id } = await user(t, 'a-one', { email: 'lock@one.test' });
    for (let i = 0; i < 5; i++) assert.equal((await login('lock@one.test', 'bad password ' + i)).status, 401);
    const locked = await login('lock@one.test');
    assert.equal(locked.status, 403);
    assert.equal(locked.body.errorCode, 'GH-43005');
    const rec = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.equal(rec.body.isLocked, true);
    await t.call('POST', `/identity/resources/users/v1/${id}/unlock`, { token: vendor });
    assert.equal((await login('lock@one.test')).status, 200);
  });

  test('wrong passwords sent at the same moment are each counted once: the lock comes at the policy count', async () => {
    const { id } = await user(t, 'a-one', { email: 'burst@one.test' });
    // All five read the user (0 failures) before any is counted: a read-then-write count would store 1, not lock.
    const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => login('burst@one.test', `wrong ${i}`)));
    assert.deepEqual(
      burst.map((r) => r.status),
      [401, 401, 401, 401, 401],
    );
    const row = await t.db.query<{ failed_attempts: number; is_locked: boolean }>(
      'SELECT failed_attempts, is_locked FROM users WHERE id = $1',
      [id],
    );
    assert.deepEqual(row.rows[0], { failed_attempts: 5, is_locked: true });
    assert.equal((await login('burst@one.test')).status, 403);
    const locked = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE event_key = 'user.locked' AND entity_id = $1`,
      [id],
    );
    assert.equal(locked.rows[0].n, 1, 'one user.locked event');
  });

  test('a lock with a duration lifts itself', async () => {
    const { id } = await user(t, 'a-one', { email: 'timed@one.test' });
    await t.db.query(
      `UPDATE users SET is_locked = true, locked_until = now() - interval '1 second', failed_attempts = 5 WHERE id = $1`,
      [id],
    );
    assert.equal((await login('timed@one.test')).status, 200);
  });

  test('a disabled membership or an expired temporary membership cannot sign in there', async () => {
    const { id } = await user(t, 'a-two', { email: 'gone@two.test' });
    await t.call('POST', `/identity/resources/tenants/users/v1/${id}/disable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'a-two' },
    });
    const r = await login('gone@two.test');
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-43004');
    await t.call('POST', `/identity/resources/tenants/users/v1/${id}/enable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'a-two' },
    });
    await t.db.query(
      `UPDATE user_tenants SET temporary_expiration_date = now() - interval '1 minute' WHERE user_id = $1`,
      [id],
    );
    assert.equal((await login('gone@two.test')).status, 403);
  });

  test('a stored hash with weaker parameters is replaced by current argon2id after a good sign-in', async () => {
    const { id } = await user(t, 'a-one', { email: 'rehash@one.test' });
    const weak = await argon2.hash(PASSWORD, {
      algorithm: 2 /* Argon2id (a const enum in the typings) */,
      memoryCost: 4096,
      timeCost: 1,
      parallelism: 1,
    });
    await t.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [id, weak]);
    assert.equal((await login('rehash@one.test')).status, 200);
    const { rows } = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [id]);
    assert.notEqual(rows[0].password_hash, weak);
    assert.match(rows[0].password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal((await login('rehash@one.test')).status, 200, 'the new hash verifies');
  });
});

describe('sessions', () => {
  test('list mine, revoke one, revoke all but current; vendor revokes all', async () => {
    const { id } = await user(t, 'a-one', { email: 'sess@one.test' });
    const s1 = await login('sess@one.test', PASSWORD, { 'user-agent': 'agent-one' });
    const s2 = await login('sess@one.test', PASSWORD, { 'user-agent': 'agent-two' });
    const s3 = await login('sess@one.test');
    const list = await t.call('GET', '/identity/resources/users/sessions/v1/me', { token: s3.body.accessToken });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 3);
    assert.equal(list.body.filter((s: any) => s.current).length, 1);
    assert.ok(list.body.some((s: any) => s.userAgent === 'agent-one'));
    const sid1 = claims(s1.body.accessToken).sid;
    const del = await t.call('DELETE', `/identity/resources/users/sessions/v1/me/${sid1}`, {
      token: s3.body.accessToken,
    });
    assert.equal(del.status, 200);
    assert.equal((await refresh(s1.body.refreshToken)).status, 401);
    assert.equal(
      (await t.call('DELETE', `/identity/resources/users/sessions/v1/me/${sid1}`, { token: s3.body.accessToken }))
        .status,
      404,
    );
    const all = await t.call('DELETE', '/identity/resources/users/sessions/v1/me/all', { token: s3.body.accessToken });
    assert.deepEqual(all.body, { revoked: 1 });
    assert.equal((await refresh(s2.body.refreshToken)).status, 401);
    const keep = await refresh(s3.body.refreshToken);
    assert.equal(keep.status, 201);
    const v = await t.call('DELETE', `/identity/resources/vendor-only/users/v1/${id}/sessions`, { token: vendor });
    assert.deepEqual(v.body, { revoked: 1 });
    assert.equal((await refresh(keep.body.refreshToken)).status, 401);
  });

  test('the current session; revoke some by id (only my own are touched)', async () => {
    await user(t, 'a-one', { email: 'cur@one.test' });
    await user(t, 'a-one', { email: 'other@one.test' });
    const S = '/identity/resources/users/sessions/v1';
    const a = await login('cur@one.test', PASSWORD, { 'user-agent': 'agent-cur' });
    const b = await login('cur@one.test');
    const theirs = await login('other@one.test');
    const cur = await t.call('GET', `${S}/me/current`, { token: a.body.accessToken });
    assert.equal(cur.status, 200, JSON.stringify(cur.body));
    assert.equal(cur.body.id, claims(a.body.accessToken).sid);
    assert.equal(cur.body.current, true);
    assert.equal(cur.body.userAgent, 'agent-cur');
    assert.equal((await t.call('GET', `${S}/me/current`, { token: vendor })).status, 403);
    assert.equal((await t.call('GET', `${S}/me/current`)).status, 401);

    // Bad bodies change nothing.
    for (const body of [{}, { sessionIds: [] }, { sessionIds: ['nope'] }, { sessionIds: 'x' }]) {
      const r = await t.call('POST', `${S}/revoke`, { token: b.body.accessToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    // Another user's session id is not mine: nothing revoked, and it still refreshes.
    const other = await t.call('POST', `${S}/revoke`, {
      token: b.body.accessToken,
      body: { sessionIds: [claims(theirs.body.accessToken).sid] },
    });
    assert.deepEqual(other.body, { revoked: 0 });
    assert.equal((await refresh(theirs.body.refreshToken)).status, 201);
    const mine = await t.call('POST', `${S}/revoke`, {
      token: b.body.accessToken,
      body: { sessionIds: [claims(a.body.accessToken).sid] },
    });
    assert.deepEqual(mine.body, { revoked: 1 });
    assert.equal((await refresh(a.body.refreshToken)).status, 401);
    // Its access token is still a valid JWT until it expires, but its session ended: the guard refuses it.
    const ended = await t.call('GET', `${S}/me/current`, { token: a.body.accessToken });
    assert.equal(ended.status, 401);
    assert.equal(ended.body.errorCode, 'GH-43003');
    assert.equal((await t.call('GET', `${S}/me/current`, { token: b.body.accessToken })).status, 200);
  });

  test('a deleted user cannot refresh', async () => {
    const { id } = await user(t, 'a-one', { email: 'deleted@one.test' });
    const s = await login('deleted@one.test');
    await t.call('DELETE', `/identity/resources/users/v1/${id}`, { token: vendor });
    assert.equal((await refresh(s.body.refreshToken)).status, 401);
  });

  test('a user disabled in the account stops at the next refresh', async () => {
    const { id } = await user(t, 'a-two', { email: 'dis@two.test' });
    const s = await login('dis@two.test');
    await t.call('POST', `/identity/resources/tenants/users/v1/${id}/disable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'a-two' },
    });
    const r = await refresh(s.body.refreshToken);
    assert.equal(r.status, 403);
    assert.equal((await refresh(s.body.refreshToken)).status, 401, 'and the session is gone');
  });

  test('policy: concurrent limit revokes the oldest; idle timeout ends a session; token lifetime is configurable', async () => {
    await account(t, { id: 'a-pol' });
    await user(t, 'a-pol', { email: 'pol@pol.test' });
    const set = await t.call('POST', '/identity/resources/configurations/sessions/v1', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'a-pol' },
      body: {
        sessionConcurrentConfiguration: { isActive: true, maxSessions: 1 },
        sessionIdleTimeoutConfiguration: { isActive: true, timeout: 1 },
      },
    });
    assert.equal(set.status, 201, JSON.stringify(set.body));
    assert.deepEqual(set.body.sessionConcurrentConfiguration, { isActive: true, maxSessions: 1 });
    const env = await t.call('GET', '/identity/resources/configurations/sessions/v1/vendor', { token: vendor });
    assert.equal(env.body.sessionConcurrentConfiguration.isActive, false, 'the environment policy is unchanged');
    const first = await login('pol@pol.test');
    const second = await login('pol@pol.test');
    assert.equal((await refresh(first.body.refreshToken)).status, 401);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await refresh(second.body.refreshToken)).status, 401, 'idle for longer than 1 s');

    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { defaultTokenExpiration: 120 },
    });
    const s = await login('journey@one.test');
    assert.equal(s.body.expiresIn, 120);
    assert.equal(claims(s.body.accessToken).exp - claims(s.body.accessToken).iat, 120);
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { defaultTokenExpiration: 300 },
    });
  });
});

describe('accounts and self-service with real tokens', () => {
  test('switch the active account; the next refresh carries it', async () => {
    const { id } = await user(t, 'a-one', { email: 'switch@one.test' });
    await t.call('POST', `/identity/resources/users/v1/${id}/tenant`, { token: vendor, body: { tenantId: 'a-two' } });
    const s = await login('switch@one.test');
    assert.equal(claims(s.body.accessToken).tenantId, 'a-one');
    const sw = await t.call('PUT', '/identity/resources/users/v1/tenant', {
      token: s.body.accessToken,
      body: { tenantId: 'a-two' },
    });
    assert.equal(sw.status, 200, JSON.stringify(sw.body));
    const r = await refresh(s.body.refreshToken);
    assert.equal(claims(r.body.accessToken).tenantId, 'a-two');
    assert.deepEqual(claims(r.body.accessToken).roles, ['read-only']);
    const tenants = await t.call('GET', '/identity/resources/users/v3/me/tenants', { token: r.body.accessToken });
    assert.deepEqual(tenants.body.tenants.map((x: any) => x.tenantId).sort(), ['a-one', 'a-two']);
    assert.equal(tenants.body.activeTenant.tenantId, 'a-two');
    const none = await t.call('PUT', '/identity/resources/users/v1/tenant', {
      token: r.body.accessToken,
      body: { tenantId: 'a-pol' },
    });
    assert.equal(none.status, 403);
  });

  test('sub-account access lets a user act in a sub-account', async () => {
    await account(t, { id: 'a-parent' });
    await account(t, { id: 'a-child', parentTenantId: 'a-parent' });
    const { id } = await user(t, 'a-parent', { email: 'reseller@parent.test' });
    const s = await login('reseller@parent.test');
    const denied = await t.call('PUT', '/identity/resources/users/v1/tenant', {
      token: s.body.accessToken,
      body: { tenantId: 'a-child' },
    });
    assert.equal(denied.status, 403);
    await t.call('PUT', `/identity/resources/sub-tenants/users/v1/${id}/access`, {
      token: vendor,
      body: { allowAccess: true },
      headers: { 'gatehouse-tenant-id': 'a-parent' },
    });
    const ok = await t.call('PUT', '/identity/resources/users/v1/tenant', {
      token: s.body.accessToken,
      body: { tenantId: 'a-child' },
    });
    assert.equal(ok.status, 200);
    const r = await refresh(s.body.refreshToken);
    assert.equal(claims(r.body.accessToken).tenantId, 'a-child');
    // The active account is reached through sub-account access: not a membership, still the activeTenant.
    const mine = await t.call('GET', '/identity/resources/users/v1/me/tenants', { token: r.body.accessToken });
    assert.deepEqual(
      mine.body.tenants.map((a: { tenantId: string }) => a.tenantId),
      ['a-parent'],
    );
    assert.equal(mine.body.activeTenant.tenantId, 'a-child');
    assert.equal(mine.body.activeTenant.vendorId, t.ctx.environment.id);
  });

  test('foundation self-service routes with a real token: hierarchy, settings, delete current account', async () => {
    await account(t, { id: 'a-self' });
    await user(t, 'a-self', { email: 'owner@self.test' });
    const s = await login('owner@self.test');
    const token = s.body.accessToken;
    const settings = await t.call('PUT', '/tenants/resources/account-settings/v1', {
      token,
      body: { currency: 'EUR' },
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    const sub = await t.call('POST', '/tenants/resources/sub-tenants/v1', {
      token,
      body: { tenantId: 'a-self-sub', name: 'Sub', parentTenantId: 'a-self' },
    });
    assert.equal(sub.status, 201, JSON.stringify(sub.body));
    const tree = await t.call('GET', '/tenants/resources/hierarchy/v1', { token });
    assert.deepEqual(
      tree.body.map((x: any) => x.tenantId),
      ['a-self-sub'],
    );
    const del = await t.call('DELETE', '/tenants/resources/tenants/v1', { token });
    assert.equal(del.status, 200);
    assert.equal((await refresh(s.body.refreshToken)).status, 401, 'the account and its users are gone');
  });
});

describe('rate limits', () => {
  test('too many sign-in attempts for one identifier: 429 with retry-after', async () => {
    const limited = await startTestApp({ LOGIN_RATE_LIMIT_PER_IDENTIFIER: '3' });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await limited.call('POST', `${A}/user`, { body: { email: 'rl@x.test', password: 'whatever1' } });
        assert.equal(r.status, 401);
      }
      const r = await limited.call('POST', `${A}/user`, { body: { email: 'rl@x.test', password: 'whatever1' } });
      assert.equal(r.status, 429);
      assert.equal(r.body.errorCode, 'GH-10006');
      assert.ok(Number(r.headers['retry-after']) >= 1);
    } finally {
      await limited.close();
    }
  });
});

describe('signing keys reload during sign-in', () => {
  test('sign-in and refresh keep working when the cached keys are due for a reload (inside their transaction)', async () => {
    const fast = await startTestApp({ SIGNING_KEYS_RELOAD_MS: '1' });
    try {
      await account(fast, { id: 'reload', name: 'Reload' });
      await user(fast, 'reload', { email: 'reload@r.test' });
      let refreshToken = '';
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 5));
        const s = await fast.call('POST', `${A}/user`, { body: { email: 'reload@r.test', password: PASSWORD } });
        assert.equal(s.status, 200, JSON.stringify(s.body));
        refreshToken = s.body.refreshToken;
      }
      await new Promise((r) => setTimeout(r, 5));
      const r = await fast.call('POST', `${A}/user/token/refresh`, { body: { refreshToken } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    } finally {
      await fast.close();
    }
  });
});
