import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

let t: TestApp;
let vendor: string;

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => {
  await t.close();
});

async function account(tenantId: string, extra: Record<string, unknown> = {}) {
  const r = await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId, name: tenantId, ...extra } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

describe('MFA policy: a device lifetime of 0 where nothing is remembered', () => {
  const P = '/identity/resources/configurations/v1/mfa-policy';
  test('0 is accepted with allowRememberMyDevice false and read back', async () => {
    await account('mfa-zero');
    const h = { 'gatehouse-tenant-id': 'mfa-zero' };
    const r = await t.call('PUT', P, { token: vendor, headers: h, body: { allowRememberMyDevice: false, mfaDeviceExpiration: 0 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaDeviceExpiration, 0);
    assert.equal(r.body.allowRememberMyDevice, false);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.mfaDeviceExpiration, 0);
  });
  test('0 with remember-device on is 400 naming the field, and changes nothing', async () => {
    await account('mfa-zero-on');
    const h = { 'gatehouse-tenant-id': 'mfa-zero-on' };
    const bad = await t.call('PUT', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true, mfaDeviceExpiration: 0 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /mfaDeviceExpiration/);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.tenantId, null);
    // Turning remember-device on over a stored 0 is the same combination.
    assert.equal((await t.call('PUT', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status, 200);
    const on = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true } });
    assert.equal(on.status, 400);
    assert.match(on.body.errors[0], /mfaDeviceExpiration/);
    const g = await t.call('GET', P, { token: vendor, headers: h });
    assert.equal(g.body.allowRememberMyDevice, false);
    const both = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true, mfaDeviceExpiration: 600 } });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.equal((await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status, 400);
    assert.equal((await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 30 } })).status, 400);
  });
});
