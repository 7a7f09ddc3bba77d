import assert from 'node:assert/strict';
import { installBrowser, startListeningApp, type ListeningApp } from './listening.ts';

export const PASSWORD = 'correct horse battery staple';

/**
 * A listening app with the vendor's browser SDK pointed at it (baseUrl: the origin, so calls go through /frontegg),
 * plus setup helpers that go through the API with the vendor token.
 */
export async function startBrowserSdk(env: Record<string, string> = {}) {
  const t: ListeningApp = await startListeningApp(env);
  const { jar } = installBrowser(t.origin);
  const sdk = await import('@frontegg/rest-api');
  sdk.ContextHolder.for('default').setContext({ baseUrl: t.origin });
  const vendor = await t.vendorToken();
  return {
    t,
    sdk,
    jar,
    vendor,
    async account(tenantId: string, name = tenantId, parentTenantId?: string) {
      const r = await t.call('POST', '/tenants/resources/tenants/v1', {
        token: vendor,
        body: { tenantId, name, parentTenantId },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    },
    async user(tenantId: string, email: string, extra: Record<string, unknown> = {}): Promise<string> {
      const r = await t.call('POST', '/identity/resources/users/v1', {
        token: vendor,
        body: { email, password: PASSWORD, ...extra },
        headers: { 'gatehouse-tenant-id': tenantId },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.id as string;
    },
    /** Signs in through the SDK (loginv2); the SDK keeps the access token, the jar the refresh cookie. */
    async signIn(email: string, password = PASSWORD) {
      return sdk.api.auth.loginv2({ email, password });
    },
  };
}

/** Asserts that a call fails with a FronteggApiError of the status. */
export async function rejectsWith(p: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(p, (e: { statusCode?: number; message?: string }) => {
    assert.equal(e.statusCode, status, e.message);
    return true;
  });
}
