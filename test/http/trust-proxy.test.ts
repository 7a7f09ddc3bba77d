import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

// Behind a reverse proxy the socket's peer is the proxy: TRUST_PROXY says which proxies may name the client through
// X-Forwarded-For, so IP restrictions, rate limits and the audit log see the client's address (decisions "Trusted proxies").

const IP = '/identity/resources/configurations/v1/restrictions/ip';
const OFFICE = '203.0.113.5';
const HOME = '192.0.2.10';
const PROXY = '10.0.0.2';

async function restrictedApp(env: Record<string, string>): Promise<TestApp> {
  const t = await startTestApp(env);
  const vendor = await t.vendorToken();
  const h = { 'gatehouse-tenant-id': 'tp-acme' };
  await account(t, { id: 'tp-acme' });
  await user(t, 'tp-acme', { email: 'ada@tp.test', password: PASSWORD });
  assert.equal(
    (await t.call('POST', IP, { token: vendor, body: { ip: '203.0.113.0/24', strategy: 'ALLOW' }, headers: h })).status,
    201,
  );
  const on = await t.call('POST', `${IP}/config`, {
    token: vendor,
    body: { isActive: true, strategy: 'ALLOW' },
    headers: h,
  });
  assert.equal(on.status, 201, JSON.stringify(on.body));
  return t;
}

const login = (t: TestApp, remoteAddress: string, forwardedFor?: string) =>
  t.call('POST', '/identity/resources/auth/v1/user', {
    body: { email: 'ada@tp.test', password: PASSWORD },
    remoteAddress,
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

describe('trusted proxies', () => {
  let trusting: TestApp;
  let direct: TestApp;
  before(async () => {
    trusting = await restrictedApp({ TRUST_PROXY: `${PROXY}/32,loopback` });
    direct = await restrictedApp({});
  });
  after(async () => {
    await trusting?.close();
    await direct?.close();
  });

  test('through a trusted proxy, the forwarded client address is the one IP restrictions judge', async () => {
    assert.equal((await login(trusting, PROXY, OFFICE)).status, 200);
    const home = await login(trusting, PROXY, HOME);
    assert.equal(home.status, 403);
    assert.equal(home.body.errorCode, 'GH-65005');
    // A client that forges the header in front of the proxy does not get past it: the rightmost untrusted hop counts.
    assert.equal((await login(trusting, PROXY, `${OFFICE}, ${HOME}`)).status, 403);
  });

  test('a peer that is not a trusted proxy cannot name another address', async () => {
    assert.equal((await login(trusting, HOME, OFFICE)).status, 403);
    assert.equal((await login(trusting, OFFICE)).status, 200);
  });

  test('without TRUST_PROXY the header is ignored: the socket peer is the client', async () => {
    assert.equal((await login(direct, HOME, OFFICE)).status, 403);
    assert.equal((await login(direct, OFFICE, HOME)).status, 200);
  });

  test('TRUST_PROXY values: false, true, hop counts, addresses, CIDR ranges and names; anything else is a configuration error', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1 ,uniquelocal' }).trustProxy, [
      '10.0.0.0/8',
      '::1',
      'uniquelocal',
    ]);
    for (const bad of ['10.0.0.0/33', 'proxy.example', '0', '2001:db8::/129', '1.2.3.4/8/9']) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: bad }),
        (e: unknown) => e instanceof ConfigError && /TRUST_PROXY/.test(e.message),
        bad,
      );
    }
  });
});
