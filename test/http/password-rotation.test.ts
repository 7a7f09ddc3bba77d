import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

const CONFIG = '/identity/resources/configurations/v1';
const ROTATION = `${CONFIG}/password-rotation`;
const U = '/identity/resources/users';
const LOGIN = '/identity/resources/auth/v1/user';
const PASSWORD = 'Rotation-Passw0rd-2024!';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VECTORS = JSON.parse(readFileSync(new URL('../fixtures/hash-vectors.json', import.meta.url), 'utf8')) as {
  vectors: { type: string; password: string; passwordHash: string; passwordHashConfig?: string }[];
};

let t: TestApp;
let vendor: string;

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100000' });
  vendor = await t.vendorToken();
  for (const tenantId of ['rot-a', 'rot-b', 'rot-gone']) {
    await account(t, { id: tenantId });
  }
  assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/rot-gone', { token: vendor })).status, 200);
});
after(async () => t?.close());

const v = (method: string, url: string, tenant?: string, body?: unknown) =>
  t.call(method, url, { token: vendor, body, headers: tenant ? { 'gatehouse-tenant-id': tenant } : {} });
const login = (email: string, password = PASSWORD) => t.call('POST', LOGIN, { body: { email, password } });

const createUser = async (email: string, tenant: string) =>
  (await user(t, tenant, { email, name: 'Rot User', password: PASSWORD })).id;
/** Moves the user's password `seconds` into the past (as if set that long ago). */
const age = (email: string, seconds: number) =>
  t.db.query(`UPDATE users SET password_changed_at = now() - make_interval(secs => $2) WHERE email = $1`, [
    email,
    seconds,
  ]);
const changedAt = async (email: string): Promise<Date> =>
  (await t.db.query<{ at: Date }>('SELECT password_changed_at AS at FROM users WHERE email = $1', [email])).rows[0].at;

describe('password rotation: configuration', () => {
  test('404 until configured; the environment policy applies to accounts without their own', async () => {
    for (const url of [ROTATION, `${ROTATION}/vendor`]) assert.equal((await v('GET', url)).status, 404);
    assert.equal((await v('GET', ROTATION, 'rot-a')).status, 404);

    const set = await v('POST', ROTATION, undefined, { isActive: true, rotationPeriod: 3600, notificationPeriod: 600 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const { id, createdAt, updatedAt, ...rest } = set.body;
    assert.match(id, UUID);
    assert.match(createdAt, ISO);
    assert.match(updatedAt, ISO);
    assert.deepEqual(rest, { tenantId: null, isActive: true, rotationPeriod: 3600, notificationPeriod: 600 });
    assert.deepEqual((await v('GET', ROTATION)).body, set.body);
    assert.deepEqual((await v('GET', `${ROTATION}/vendor`)).body, set.body);
    assert.deepEqual((await v('GET', ROTATION, 'rot-a')).body, set.body, 'inherited');

    // An account's own policy: the fields left out come from the inherited one.
    const own = await v('POST', ROTATION, 'rot-b', { isActive: false });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.tenantId, 'rot-b');
    assert.deepEqual([own.body.isActive, own.body.rotationPeriod, own.body.notificationPeriod], [false, 3600, 600]);
    assert.deepEqual((await v('GET', ROTATION, 'rot-b')).body, own.body);
    assert.equal((await v('GET', ROTATION)).body.isActive, true, 'the environment policy is unchanged');

    // A user token acts on its own account, whatever tenant header it sends.
    const user = await t.userToken({ tenantId: 'rot-b', permissions: ['fe.secure.read.securityPolicy'] });
    const mine = await t.call('GET', ROTATION, { token: user, headers: { 'gatehouse-tenant-id': 'rot-a' } });
    assert.equal(mine.status, 200);
    assert.equal(mine.body.tenantId, 'rot-b');
    assert.equal(
      (await t.call('GET', ROTATION, { token: await t.userToken({ tenantId: 'rot-b' }) })).status,
      403,
      'permission needed',
    );
  });

  test('bad input is a 400 naming the field and changes nothing', async () => {
    const before = (await v('GET', ROTATION)).body;
    const cases: [unknown, string][] = [
      [{ notificationPeriod: 7200 }, 'notificationPeriod'],
      [{ rotationPeriod: 10 }, 'rotationPeriod'],
      [{ rotationPeriod: 3600.5 }, 'rotationPeriod'],
      [{ isActive: 'yes' }, 'isActive'],
      [{ notificationPeriod: -1 }, 'notificationPeriod'],
    ];
    for (const [body, field] of cases) {
      const r = await v('POST', ROTATION, undefined, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(JSON.stringify(r.body), new RegExp(field), JSON.stringify(r.body));
    }
    for (const body of [{}, { surprise: 1 }]) {
      const empty = await v('POST', ROTATION, undefined, body);
      assert.equal(empty.status, 400, 'unknown fields are dropped, leaving nothing to set');
      assert.equal(empty.body.errorCode, 'GH-30008');
    }
    assert.deepEqual((await v('GET', ROTATION)).body, before);
    assert.equal((await v('POST', ROTATION, 'rot-gone', { isActive: true })).status, 404, 'removed account');
    assert.equal((await v('POST', ROTATION, 'nope', { isActive: true })).status, 404, 'unknown account');
    // A shorter period alone shortens a notice that would outlast it.
    const short = await v('POST', ROTATION, 'rot-b', { rotationPeriod: 300 });
    assert.equal(short.status, 200);
    assert.deepEqual([short.body.rotationPeriod, short.body.notificationPeriod], [300, 300]);
    assert.equal((await v('POST', ROTATION, 'rot-b', { rotationPeriod: 3600, notificationPeriod: 600 })).status, 200);
  });
});

describe('password rotation: sign-in', () => {
  test('fresh: tokens; within the notice: tokens with passwordExpiresIn; expired: the reset answer, then a new password', async () => {
    assert.equal(
      (await v('POST', ROTATION, undefined, { isActive: true, rotationPeriod: 3600, notificationPeriod: 600 })).status,
      200,
    );
    const id = await createUser('ann@rot.test', 'rot-a');

    const fresh = await login('ann@rot.test');
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    assert.ok(fresh.body.accessToken);
    assert.equal(fresh.body.passwordExpiresIn, undefined);
    assert.equal(fresh.body.notificationPeriod, undefined);

    await age('ann@rot.test', 3300);
    const soon = await login('ann@rot.test');
    assert.equal(soon.status, 200, JSON.stringify(soon.body));
    assert.ok(soon.body.accessToken);
    assert.ok(
      soon.body.passwordExpiresIn > 0 && soon.body.passwordExpiresIn <= 300,
      String(soon.body.passwordExpiresIn),
    );
    assert.equal(soon.body.notificationPeriod, 600);

    await age('ann@rot.test', 3700);
    assert.equal((await login('ann@rot.test', 'Wrong-Passw0rd-2024!')).status, 401, 'a wrong password learns nothing');
    const expired = await login('ann@rot.test');
    assert.equal(expired.status, 200, JSON.stringify(expired.body));
    assert.equal(expired.body.accessToken, undefined);
    assert.equal(expired.body.refreshToken, undefined);
    assert.match(expired.body.resetPasswordToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(expired.body.userId, id);

    const token = expired.body.resetPasswordToken;
    const same = await t.call('POST', `${U}/v1/passwords/reset/verify`, {
      body: { userId: id, token, password: PASSWORD },
    });
    assert.equal(same.status, 400, 'the expired password cannot replace itself');
    assert.deepEqual(same.body.context?.rules, ['rotation']);
    const reset = await t.call('POST', `${U}/v1/passwords/reset/verify`, {
      body: { userId: id, token, password: 'Rotated-Passw0rd-2025!' },
    });
    assert.equal(reset.status, 201, JSON.stringify(reset.body));
    assert.ok(Date.now() - (await changedAt('ann@rot.test')).getTime() < 60_000, 'the clock restarts');
    assert.equal((await login('ann@rot.test')).status, 401, 'the old password is gone');
    const after = await login('ann@rot.test', 'Rotated-Passw0rd-2025!');
    assert.equal(after.status, 200);
    assert.ok(after.body.accessToken);
    assert.equal(after.body.passwordExpiresIn, undefined);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/passwords/reset/verify`, {
          body: { userId: id, token, password: 'Another-Passw0rd-2026!' },
        })
      ).status,
      410,
      'single use',
    );
  });

  test("the account's own policy wins; an inactive policy lets an old password in", async () => {
    await createUser('bob@rot.test', 'rot-b');
    await age('bob@rot.test', 100_000);
    assert.equal((await v('POST', ROTATION, 'rot-b', { isActive: false })).status, 200);
    const ok = await login('bob@rot.test');
    assert.equal(ok.status, 200);
    assert.ok(ok.body.accessToken, 'rot-b does not rotate');

    assert.equal((await v('POST', ROTATION, 'rot-b', { isActive: true })).status, 200);
    const expired = await login('bob@rot.test');
    assert.ok(expired.body.resetPasswordToken, 'the change applies at once (cache invalidated)');
    assert.equal(expired.body.accessToken, undefined);

    assert.equal((await v('POST', ROTATION, 'rot-b', { rotationPeriod: 200_000, notificationPeriod: 0 })).status, 200);
    const longer = await login('bob@rot.test');
    assert.ok(longer.body.accessToken);
    assert.equal(longer.body.passwordExpiresIn, undefined, 'notificationPeriod 0: no notice');
  });

  test('a password change restarts the clock; a rehash of an imported hash at sign-in does not', async () => {
    const id = await createUser('cat@rot.test', 'rot-a');
    await age('cat@rot.test', 1000);
    const aged = await changedAt('cat@rot.test');
    const token = (await login('cat@rot.test')).body.accessToken;
    const change = await t.call('POST', `${U}/v1/passwords/change`, {
      token,
      body: { password: PASSWORD, newPassword: 'Changed-Passw0rd-2025!' },
    });
    assert.ok(change.status < 300, JSON.stringify(change.body));
    assert.ok((await changedAt('cat@rot.test')).getTime() > aged.getTime() + 900_000);
    assert.ok(id);

    const vec = VECTORS.vectors.find((x) => x.type === 'bcrypt')!;
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: { email: 'dan@rot.test', tenantId: 'rot-a', passwordHash: vec.passwordHash, passwordHashType: 'bcrypt' },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    await age('dan@rot.test', 1000);
    const before = await changedAt('dan@rot.test');
    const signed = await login('dan@rot.test', vec.password);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const { rows } = await t.db.query<{ password_hash: string; at: Date }>(
      'SELECT password_hash, password_changed_at AS at FROM users WHERE email = $1',
      ['dan@rot.test'],
    );
    assert.match(rows[0].password_hash, /^\$argon2id\$/, 'rehashed');
    assert.equal(rows[0].at.getTime(), before.getTime(), 'same password: the clock runs on');
    // The marker is used up by that rehash: a later real change in the same session restarts the clock.
    await t.db.query(`UPDATE users SET password_hash = 'x' || password_hash WHERE email = $1`, ['dan@rot.test']);
    assert.ok((await changedAt('dan@rot.test')).getTime() > before.getTime());
  });
});
