import assert from 'node:assert/strict';
import type { TestApp } from './harness.ts';

/** Sign-in limits out of the way: the migration tests sign in many times from one address. */
export const ENV = {
  LOGIN_RATE_LIMIT_PER_IP: '100000',
  LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100000',
  LOGIN_FLOOD_LIMIT_PER_IP: '10000000',
};

/** Polls a user migration's status until `until` holds (bounded). */
export async function waitFor(app: TestApp, id: string, until: (s: any) => boolean, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await app.call('GET', `/identity/resources/migrations/v1/local/bulk/status/${id}`, {
      token: await app.vendorToken(),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    if (until(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`migration ${id}: ${JSON.stringify(r.body).slice(0, 500)}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}
