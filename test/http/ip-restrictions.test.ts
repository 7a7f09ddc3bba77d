import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const IP = '/identity/resources/configurations/v1/restrictions/ip';
const OFFICE = '203.0.113.5';
const HOME = '192.0.2.10';
const ids: Record<string, string> = {};
const rules: Record<string, string> = {};

const as = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const v = (method: string, url: string, body?: unknown, tenantId = 'ip-acme', remoteAddress?: string) =>
  t.call(method, url, { token: vendor, body, headers: as(tenantId), remoteAddress });
const login = (email: string, remoteAddress: string) =>
  t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password: PASSWORD }, remoteAddress });
const refresh = (refreshToken: string, remoteAddress: string) =>
  t.call('POST', '/identity/resources/auth/v1/user/token/refresh', { body: { refreshToken }, remoteAddress });

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'ip-acme' });
  await account(t, { id: 'ip-beta' });
  ids.ada = (await user(t, 'ip-acme', { email: 'ada@acme.test' })).id; // first user: admin (holds fe.secure.write.securityPolicy)
  ids.bob = (await user(t, 'ip-acme', { email: 'bob@acme.test' })).id; // read-only
  ids.carl = (await user(t, 'ip-beta', { email: 'carl@beta.test' })).id;
});
after(async () => t?.close());

describe('IP restrictions', () => {
  test('an account starts with an inactive allow configuration and no rules', async () => {
    const c = await v('GET', `${IP}/config`);
    assert.equal(c.status, 200);
    assert.deepEqual(c.body, { strategy: 'ALLOW', isActive: false });
    const list = await v('GET', IP);
    assert.deepEqual(list.body.items, []);
    assert.equal((await t.call('GET', IP, { token: vendor })).status, 400, 'an environment token names the account');
    assert.equal((await v('GET', IP, undefined, 'ip-nowhere')).status, 404);
  });

  test('CIDR syntax errors are a 400 naming the field and the rule; nothing is stored', async () => {
    const cases: [string, RegExp][] = [
      ['10.0.0.1/8', /ip "10\.0\.0\.1\/8" has host bits set after \/8; the range is written 10\.0\.0\.0\/8/],
      ['10.0.0.0/33', /prefix length above 32/],
      ['2001:db8::/129', /prefix length above 128/],
      ['10.0.0.0/x', /prefix length that is not a number/],
      ['300.1.2.3', /is not an IPv4 or IPv6 address or CIDR range/],
      ['acme.com', /is not an IPv4 or IPv6 address/],
      ['1.2.3.4/8/9', /more than one/],
      ['fe80::1%eth0', /zone id/],
    ];
    for (const [ip, re] of cases) {
      const r = await v('POST', IP, { ip, strategy: 'ALLOW' });
      assert.equal(r.status, 400, ip);
      assert.equal(r.body.errorCode, 'GH-10001');
      assert.match(r.body.errors[0], re);
    }
    const noStrategy = await v('POST', IP, { ip: '10.0.0.0/8' });
    assert.equal(noStrategy.status, 400);
    assert.match(noStrategy.body.errors[0], /strategy/);
    assert.equal((await v('GET', IP)).body._metadata.totalItems, 0);
  });

  test('rules are stored canonically; exact duplicates are a 409, overlaps are accepted', async () => {
    const office = await v('POST', IP, { ip: '203.0.113.0/24', description: 'Office', strategy: 'ALLOW' });
    assert.equal(office.status, 201, JSON.stringify(office.body));
    assert.equal(office.body.ip, '203.0.113.0/24');
    assert.equal(office.body.isActive, true);
    rules.office = office.body.id;
    const v6 = await v('POST', IP, { ip: '2001:DB8:0:0::/32', strategy: 'ALLOW' });
    assert.equal(v6.body.ip, '2001:db8::/32');
    rules.v6 = v6.body.id;
    const single = await v('POST', IP, { ip: '198.51.100.7/32', strategy: 'BLOCK' });
    assert.equal(single.body.ip, '198.51.100.7', 'a /32 is the address itself');
    rules.blocked = single.body.id;

    for (const ip of ['203.0.113.0/24', '198.51.100.7', '::ffff:198.51.100.7']) {
      const strategy = ip.startsWith('203') ? 'ALLOW' : 'BLOCK';
      const dup = await v('POST', IP, { ip, strategy });
      assert.equal(dup.status, 409, ip);
      assert.equal(dup.body.errorCode, 'GH-65006');
      assert.match(dup.body.errors[0], /already on the (ALLOW|BLOCK) list/);
    }
    const overlap = await v('POST', IP, { ip: '203.0.113.128/25', strategy: 'ALLOW' });
    assert.equal(overlap.status, 201, 'an overlapping range is accepted');
    rules.overlap = overlap.body.id;
    assert.equal(
      (await v('POST', IP, { ip: '203.0.113.0/24', strategy: 'BLOCK', isActive: false })).status,
      201,
      'the same range on the other list is another rule',
    );
    const page = await v('GET', `${IP}?_limit=2&_offset=0`);
    assert.equal(page.body._metadata.totalItems, 5);
    assert.equal(page.body.items.length, 2);
    const filtered = await v('GET', `${IP}?_filter=office`);
    assert.deepEqual(
      filtered.body.items.map((r: any) => r.id),
      [rules.office],
    );
  });

  test('a configuration that locks everyone out is refused with the reason', async () => {
    const empty = await v('POST', `${IP}/config`, { strategy: 'ALLOW', isActive: true }, 'ip-beta');
    assert.equal(empty.status, 409);
    assert.equal(empty.body.errorCode, 'GH-65008');
    assert.match(empty.body.errors[0], /allow list of account ip-beta has no active entries/);
    assert.deepEqual(
      (await v('GET', `${IP}/config`, undefined, 'ip-beta')).body,
      { strategy: 'ALLOW', isActive: false },
      'nothing changed',
    );
  });

  test('an administrator cannot enable an allow list that does not include their own address', async () => {
    const admin = await t.userToken({ tenantId: 'ip-acme', sub: ids.ada, permissions: ['fe.secure.*'] });
    const fromHome = await t.call('POST', `${IP}/config`, {
      token: admin,
      body: { isActive: true },
      remoteAddress: HOME,
    });
    assert.equal(fromHome.status, 409);
    assert.equal(fromHome.body.errorCode, 'GH-65008');
    assert.match(fromHome.body.errors[0], new RegExp(`lock you out: your address ${HOME.replace(/\./g, '\\.')}`));
    assert.equal((await v('GET', `${IP}/config`)).body.isActive, false);
    const fromOffice = await t.call('POST', `${IP}/config`, {
      token: admin,
      body: { isActive: true },
      remoteAddress: OFFICE,
    });
    assert.equal(fromOffice.status, 201, JSON.stringify(fromOffice.body));
    assert.deepEqual(fromOffice.body, { strategy: 'ALLOW', isActive: true });
  });

  test('sign-in is admitted only from allowed addresses (IPv4 and IPv6); refresh from a refused address is refused', async () => {
    assert.equal((await login('ada@acme.test', OFFICE)).status, 200);
    const ok = await login('bob@acme.test', '203.0.113.200');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await login('bob@acme.test', '2001:db8:1::5')).status, 200);
    assert.equal((await login('bob@acme.test', '::ffff:203.0.113.9')).status, 200, 'IPv4-mapped IPv6 counts as IPv4');
    for (const from of [HOME, '2001:db9::1']) {
      const r = await login('bob@acme.test', from);
      assert.equal(r.status, 403, from);
      assert.equal(r.body.errorCode, 'GH-65005');
      assert.match(r.body.errors[0], /not allowed by the account's IP restrictions \(not on the allow list\)/);
      assert.ok(!('accessToken' in r.body));
    }
    const refused = await refresh(ok.body.refreshToken, HOME);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errorCode, 'GH-65005');
    const fine = await refresh(ok.body.refreshToken, OFFICE);
    assert.equal(fine.status, 201, 'the refused refresh did not use the token up');
    // Another account is not affected.
    assert.equal((await login('carl@beta.test', HOME)).status, 200);
  });

  test('a change that would lock every administrator out is refused (their recent sign-in addresses)', async () => {
    // ada (the only administrator) signed in from OFFICE, which only the /24 rule admits.
    const del = await v('DELETE', `${IP}/${rules.office}`);
    assert.equal(del.status, 409);
    assert.equal(del.body.errorCode, 'GH-65008');
    assert.match(del.body.errors[0], /lock every administrator of account ip-acme out/);
    assert.deepEqual(del.body.context.adminAddresses, [OFFICE]);
    // Deleting a rule administrators do not depend on is fine.
    const ok = await v('DELETE', `${IP}/${rules.overlap}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.ip, '203.0.113.128/25');
    assert.equal((await v('DELETE', `${IP}/${rules.overlap}`)).status, 404);
    assert.equal((await v('DELETE', `${IP}/not-a-uuid`)).status, 404);
  });

  test('block strategy: addresses on the block list are refused; inactive rules do not count', async () => {
    assert.equal((await v('POST', IP, { ip: '192.0.2.0/24', strategy: 'BLOCK', isActive: false })).status, 201);
    const c = await v('POST', `${IP}/config`, { strategy: 'BLOCK' });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.deepEqual(c.body, { strategy: 'BLOCK', isActive: true });
    const r = await login('bob@acme.test', '198.51.100.7');
    assert.equal(r.status, 403);
    assert.match(r.body.errors[0], /on the block list/);
    assert.equal((await login('bob@acme.test', HOME)).status, 200, 'an inactive block rule does not refuse');
    // Blocking the office (where the administrator signs in) is refused.
    const lock = await v('POST', IP, { ip: '203.0.113.0/28', strategy: 'BLOCK' });
    assert.equal(lock.status, 409);
    assert.equal(lock.body.errorCode, 'GH-65008');
  });

  test("verify: would a sign-in from the caller's address pass; is it on the allow list", async () => {
    const blocked = await v('POST', `${IP}/verify`, undefined, 'ip-acme', '198.51.100.7');
    assert.equal(blocked.status, 201);
    assert.deepEqual(blocked.body, {
      ip: '198.51.100.7',
      valid: false,
      isActive: true,
      strategy: 'BLOCK',
      matchedRuleId: rules.blocked,
    });
    const fine = await v('POST', `${IP}/verify`, undefined, 'ip-acme', HOME);
    assert.equal(fine.body.valid, true);
    assert.equal(fine.body.matchedRuleId, null);
    const allow = await v('POST', `${IP}/verify/allow`, undefined, 'ip-acme', OFFICE);
    assert.equal(allow.body.valid, true, 'on the allow list even while the block list is enforced');
    assert.equal(allow.body.matchedRuleId, rules.office);
    assert.equal((await v('POST', `${IP}/verify/allow`, undefined, 'ip-acme', HOME)).body.valid, false);
    const bob = await t.userToken({
      tenantId: 'ip-acme',
      sub: ids.bob,
      permissions: ['fe.secure.read.securityPolicy'],
    });
    const mine = await t.call('POST', `${IP}/verify`, { token: bob, remoteAddress: '198.51.100.7' });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.valid, false);
    assert.equal(
      (await t.call('POST', `${IP}/config`, { token: bob, body: { isActive: false } })).status,
      403,
      'writes need the write permission',
    );
  });

  test('switched off: every address may sign in again; the rules are kept', async () => {
    assert.equal((await v('POST', `${IP}/config`, { isActive: false })).status, 201);
    assert.equal((await login('bob@acme.test', '198.51.100.7')).status, 200);
    assert.equal((await v('GET', IP)).body._metadata.totalItems, 5);
  });

  test('removing the account removes its rules and configuration', async () => {
    await account(t, { id: 'ip-doomed' });
    assert.equal((await v('POST', IP, { ip: '10.0.0.0/8', strategy: 'ALLOW' }, 'ip-doomed')).status, 201);
    assert.equal((await v('POST', `${IP}/config`, { isActive: true }, 'ip-doomed')).status, 201);
    assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/ip-doomed', { token: vendor })).status, 200);
    await account(t, { id: 'ip-doomed' });
    assert.deepEqual((await v('GET', `${IP}/config`, undefined, 'ip-doomed')).body, {
      strategy: 'ALLOW',
      isActive: false,
    });
    assert.equal((await v('GET', IP, undefined, 'ip-doomed')).body._metadata.totalItems, 0);
  });
});
