import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD } from '../fixtures/builders.ts';
import { startBrowserSdk } from '../helpers/sdk.ts';

/** Sign-up through the vendor's browser SDK, which sends no `provider` in its body. */
describe("the vendor's browser SDK: signUpUser", () => {
  let b: Awaited<ReturnType<typeof startBrowserSdk>>;
  before(async () => {
    b = await startBrowserSdk();
    const r = await b.t.call('POST', '/identity/resources/configurations/v1', {
      token: b.vendor,
      body: { allowSignups: true },
    });
    assert.equal(r.status, 201);
  });
  after(async () => b?.t.close());

  test('creates the user and the account; the user waits for activation', async () => {
    const r = await b.sdk.api.auth.signUpUser({
      email: 'sdk.signup@su-sdk.test',
      password: PASSWORD,
      companyName: 'SDK Sign-up Ltd',
    });
    assert.equal(r.shouldActivate, true, JSON.stringify(r));
    assert.ok(r.userId && r.tenantId);
    const u = await b.t.call('GET', `/identity/resources/users/v1/${r.userId}`, {
      token: b.vendor,
      headers: { 'gatehouse-tenant-id': r.tenantId },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    assert.equal(u.body.email, 'sdk.signup@su-sdk.test');
    assert.equal(u.body.provider, 'local');
  });
});
