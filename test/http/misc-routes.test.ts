import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user as createUser } from '../fixtures/builders.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';

let t: TestApp;
let vendor: string;
let sms: SmsServer;
const IP = '/identity/resources/configurations/v1/restrictions/ip';
const E = '/entitlements/resources';
const user: { id: string; token: string } = { id: '', token: '' };

const v = (method: string, url: string, body?: unknown, tenantId = 'mr-a') =>
  t.call(method, url, { token: vendor, body, headers: { 'gatehouse-tenant-id': tenantId } });

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
  vendor = await t.vendorToken();
  sms = await startSmsServer();
  await sms.configure(t);
  for (const tenantId of ['mr-a', 'mr-b']) await account(t, { id: tenantId });
  const u = await createUser(t, 'mr-a', { email: 'ada@mr.test' });
  Object.assign(user, { id: u.id, token: (await signedIn(t, u)).accessToken });
});
after(async () => {
  await t?.close();
  await sms?.close();
});

describe('POST restrictions/ip/bulk', () => {
  const count = async () => (await v('GET', `${IP}?_limit=200`)).body._metadata.totalItems as number;

  test('adds every rule in one call, in order (201)', async () => {
    const r = await v('POST', `${IP}/bulk`, [
      { ip: '203.0.113.0/24', strategy: 'BLOCK', description: 'bad net' },
      { ip: '2001:db8::/32', strategy: 'BLOCK', isActive: false },
    ]);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.ip, x.strategy, x.isActive]),
      [
        ['203.0.113.0/24', 'BLOCK', true],
        ['2001:db8::/32', 'BLOCK', false],
      ],
    );
    assert.equal(await count(), 2);
  });

  test('all or nothing: one existing entry refuses the batch (409 naming it) and adds nothing', async () => {
    const r = await v('POST', `${IP}/bulk`, [
      { ip: '198.51.100.0/24', strategy: 'BLOCK' },
      { ip: '203.0.113.0/24', strategy: 'BLOCK' },
    ]);
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-65006');
    assert.match(r.body.errors[0], /^\[1\]/);
    assert.equal(await count(), 2, 'the first entry was rolled back');
  });

  test('bad input: a repeated entry, a bad address (named by index), an empty or oversized batch: 400/409, nothing added', async () => {
    const dup = await v('POST', `${IP}/bulk`, [
      { ip: '192.0.2.1', strategy: 'BLOCK' },
      { ip: '192.0.2.1/32', strategy: 'BLOCK' },
    ]);
    assert.equal(dup.status, 409);
    assert.match(dup.body.errors[0], /\[1\].*\[0\]/);
    const bad = await v('POST', `${IP}/bulk`, [
      { ip: '192.0.2.1', strategy: 'BLOCK' },
      { ip: '300.1.1.1', strategy: 'BLOCK' },
    ]);
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /\[1\]/);
    assert.equal((await v('POST', `${IP}/bulk`, [])).status, 400);
    assert.equal(
      (
        await v(
          'POST',
          `${IP}/bulk`,
          Array.from({ length: 101 }, (_, i) => ({ ip: `10.0.${i}.0/24`, strategy: 'BLOCK' })),
        )
      ).status,
      400,
    );
    assert.equal((await v('POST', `${IP}/bulk`, { ip: '10.0.0.1', strategy: 'BLOCK' })).status, 400);
    assert.equal(await count(), 2);
  });

  test('an environment token may block any address (no caller to lock out)', async () => {
    const r = await t.call('POST', `${IP}/bulk`, {
      token: vendor,
      body: [{ ip: '127.0.0.1', strategy: 'BLOCK' }],
      headers: { 'gatehouse-tenant-id': 'mr-b' },
    });
    assert.equal(r.status, 201);
  });
});

describe('GET scim/temp/{id}/Users/count', () => {
  test('counts the users the connection provisioned; another account gets 404', async () => {
    const c = await v('POST', '/directory/resources/v1/configurations/scim2', {
      source: 'okta',
      connectionName: 'Okta',
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const url = `/directory/resources/scim/temp/${c.body.id}/Users/count`;
    assert.deepEqual((await v('GET', url)).body, { count: 0 });
    for (const name of ['u1@mr.test', 'u2@mr.test']) {
      const r = await t.app.inject({
        method: 'POST',
        url: `/directory/resources/scim/v2.0/${c.body.id}/Users`,
        headers: { authorization: `Bearer ${c.body.token}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: name,
          emails: [{ value: name, primary: true }],
        }),
      });
      assert.equal(r.statusCode, 201, r.body);
    }
    const r = await v('GET', url);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { count: 2 });
    assert.equal((await v('GET', url, undefined, 'mr-b')).status, 404);
    assert.equal((await v('GET', '/directory/resources/scim/temp/not-a-uuid/Users/count')).status, 404);
  });
});

describe('GET /entitlements/api/v2/user-entitlements', () => {
  test("answers the engine's decisions for the token's user and account", async () => {
    assert.equal(
      (await v('POST', `${E}/features/v1`, { name: 'Reports', key: 'reports', permissions: ['reports.read'] })).status,
      200,
    );
    assert.equal((await v('POST', `${E}/features/v1`, { name: 'Export', key: 'export' })).status, 200);
    const plan = await v('POST', `${E}/plans/v1`, { name: 'Pro', featureKeys: ['reports'] });
    assert.equal(plan.status, 200, JSON.stringify(plan.body));
    const empty = await t.call('GET', '/entitlements/api/v2/user-entitlements', { token: user.token });
    assert.equal(empty.status, 200, JSON.stringify(empty.body));
    // The vendor evaluator's input: features decided (expireTime -1 entitled, null missing), held permissions.
    assert.deepEqual(empty.body.features.reports, {
      planIds: [],
      expireTime: null,
      linkedPermissions: ['reports.read'],
    });
    assert.deepEqual(empty.body.plans, {});

    assert.equal(
      (await v('POST', `${E}/entitlements/v2`, { planId: plan.body.id, tenantId: 'mr-a', expirationDate: null }))
        .status,
      200,
    );
    const r = await t.call('GET', '/entitlements/api/v2/user-entitlements', { token: user.token });
    assert.deepEqual(r.body.features.reports, { planIds: [], expireTime: -1, linkedPermissions: ['reports.read'] });
    assert.deepEqual(r.body.features.export, { planIds: [], expireTime: null, linkedPermissions: [] });
    assert.equal(r.body.permissions['reports.read'], undefined, 'not held');
    assert.ok(Object.values(r.body.permissions).every((x) => x === true));
    assert.equal((await t.call('GET', '/entitlements/api/v2/user-entitlements', { token: vendor })).status, 403);
    assert.equal((await t.call('GET', '/entitlements/api/v2/user-entitlements')).status, 401);
  });
});

describe('/identity/resources/users/v1/phone (older names of the phone-number operations)', () => {
  const U = '/identity/resources/users/v1/phone';
  const smsTo = (phone: string) => sms.waitFor((m) => m.to === phone);
  const mine = async () =>
    (await t.call('GET', '/identity/resources/users/phone-numbers/v1/me', { token: user.token })).body as any[];

  test('POST phone texts a code; verifying it adds the number verified; phone/reset + reset/verify remove it', async () => {
    const r = await t.call('POST', U, { token: user.token, body: { phoneNumber: '+14155550201' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(r.body.otcToken);
    const code = smsCode(await smsTo('+14155550201'));
    assert.equal(
      (
        await t.call('POST', `${U}/verify`, {
          token: user.token,
          body: { otcToken: r.body.otcToken, code: code === '000000' ? '111111' : '000000' },
        })
      ).status,
      400,
      'a wrong code',
    );
    const ok = await t.call('POST', `${U}/verify`, { token: user.token, body: { otcToken: r.body.otcToken, code } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.verified, true);

    const reset = await t.call('POST', `${U}/reset`, { token: user.token, body: { phoneNumber: '+14155550201' } });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal(reset.body.deleted, false);
    const resetCode = smsCode(
      await sms.waitFor((m) => m.to === '+14155550201' && sms.to('+14155550201').indexOf(m) >= 1),
    );
    const wrong = await t.call('POST', `${U}/reset/verify`, {
      token: user.token,
      body: {
        phoneNumber: '+14155550201',
        otcToken: reset.body.otcToken,
        code: resetCode === '000000' ? '111111' : '000000',
      },
    });
    assert.equal(wrong.status, 400);
    assert.equal((await mine()).length, 1);
    const done = await t.call('POST', `${U}/reset/verify`, {
      token: user.token,
      body: { phoneNumber: '+14155550201', otcToken: reset.body.otcToken, code: resetCode },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(await mine(), []);
  });

  test('PUT phone/change sets a number unverified; reset of an unknown number is 404; bad numbers 400', async () => {
    const c = await t.call('PUT', `${U}/change`, { token: user.token, body: { phoneNumber: '+14155550202' } });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.verified, false);
    assert.deepEqual(
      (await mine()).map((p) => p.phoneNumber),
      ['+14155550202'],
    );
    const gone = await t.call('POST', `${U}/reset`, { token: user.token, body: { phoneNumber: '+14155550202' } });
    assert.deepEqual(
      { deleted: gone.body.deleted, otc: gone.body.otcToken },
      { deleted: true, otc: undefined },
      'an unverified number goes at once',
    );
    assert.equal(
      (await t.call('POST', `${U}/reset`, { token: user.token, body: { phoneNumber: '+14155550299' } })).status,
      404,
    );
    assert.equal((await t.call('POST', U, { token: user.token, body: { phoneNumber: '4155550203' } })).status, 400);
    assert.equal(
      (await t.call('POST', U, { token: vendor, body: { phoneNumber: '+14155550203' } })).status,
      400,
      'an environment token names the user',
    );
  });
});
