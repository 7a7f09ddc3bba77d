import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let roleIds: Record<string, string> = {};
const A = '/identity/resources/auth/v1';
const ME_TOKEN = '/identity/resources/users/v3/me/token';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const meToken = (token?: string) => t.call('POST', ME_TOKEN, { token });

/** A user signed in to its own new account; it is that account's second user (default roles). */
async function secondUser(name: string) {
  const acc = await account(t, { id: `mt-${name}` });
  await user(t, acc, { email: `owner-${name}@mt.test` });
  const u = await user(t, acc, { email: `${name}@mt.test` });
  return { id: u.id, tenantId: acc.id, s: await signedIn(t, u) };
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  roleIds = Object.fromEntries(roles.body.map((r: any) => [r.key, r.id]));
  assert.ok(roleIds.admin, 'the admin role is seeded');
});
after(async () => t?.close());

describe('POST /users/v3/me/token', () => {
  test('answers a fresh token with the current roles, the same sid, amr and auth_time; the refresh token is not rotated', async () => {
    const { id, tenantId, s } = await secondUser('fresh');
    const before = claims(s.accessToken);
    assert.ok(!before.roles.includes('admin'), 'a later user has the default roles');
    const grant = await t.call('POST', `/identity/resources/users/v1/${id}/roles`, {
      token: vendor,
      body: { roleIds: [roleIds.admin] },
      headers: { 'gatehouse-tenant-id': tenantId },
    });
    assert.equal(grant.status, 201, JSON.stringify(grant.body));

    // The session's user authenticated an hour ago (as seen by the database): auth_time must be that time, not the
    // re-issue's.
    await t.db.query(
      `UPDATE sessions SET created_at = created_at - interval '1 hour', auth_time = auth_time - interval '1 hour' WHERE id = $1`,
      [before.sid],
    );

    const r = await meToken(s.accessToken);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['accessToken', 'expires', 'expiresIn']);
    assert.equal(r.body.expiresIn, 300);
    assert.ok(Math.abs(Date.parse(r.body.expires) - Date.now() - 300_000) < 60_000);
    const c = claims(r.body.accessToken);
    assert.equal(c.type, 'userToken');
    assert.equal(c.sub, id);
    assert.equal(c.tenantId, tenantId);
    assert.equal(c.sid, before.sid);
    assert.deepEqual(c.amr, before.amr);
    assert.ok(
      Math.abs(c.auth_time - (before.auth_time - 3600)) <= 1,
      `auth_time ${c.auth_time} is the session's start`,
    );
    assert.ok(c.roles.includes('admin'), 'the role granted after sign-in is in the new token');
    assert.ok(c.permissions.includes('fe.account-settings.delete.account'));

    const me = await t.call('GET', '/identity/resources/users/v2/me', { token: r.body.accessToken });
    assert.equal(me.status, 200, 'the new token is accepted');
    const refreshed = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: s.refreshToken } });
    assert.equal(refreshed.status, 201, "the session's refresh token still works: it was not rotated");
  });

  test("follows the session's account after an account switch", async () => {
    const { id, s } = await secondUser('switch');
    await account(t, { id: 'mt-switch-2' });
    const add = await t.call('POST', `/identity/resources/users/v1/${id}/tenant`, {
      token: vendor,
      body: { tenantId: 'mt-switch-2' },
    });
    assert.ok(add.status < 300, JSON.stringify(add.body));
    const sw = await t.call('PUT', '/identity/resources/users/v1/tenant', {
      token: s.accessToken,
      body: { tenantId: 'mt-switch-2' },
    });
    assert.equal(sw.status, 200, JSON.stringify(sw.body));
    const r = await meToken(s.accessToken);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(claims(r.body.accessToken).tenantId, 'mt-switch-2');
  });

  test('a revoked session answers 401', async () => {
    const { s } = await secondUser('revoked');
    const sid = claims(s.accessToken).sid;
    assert.equal(
      (await t.call('DELETE', `/identity/resources/users/sessions/v1/me/${sid}`, { token: s.accessToken })).status,
      200,
    );
    const r = await meToken(s.accessToken);
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, 'GH-43003');
    assert.equal(r.body.accessToken, undefined);
  });

  test('after logout the access token can no longer be re-issued', async () => {
    const { s } = await secondUser('logout');
    assert.equal((await t.call('POST', `${A}/logout`, { token: s.accessToken, body: {} })).status, 201);
    assert.equal((await meToken(s.accessToken)).status, 401);
  });

  test('a locked user answers 403; unlocked, the session works again', async () => {
    const { id, s } = await secondUser('locked');
    assert.ok((await t.call('POST', `/identity/resources/users/v1/${id}/lock`, { token: vendor })).status < 300);
    const r = await meToken(s.accessToken);
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-43005');
    assert.ok((await t.call('POST', `/identity/resources/users/v1/${id}/unlock`, { token: vendor })).status < 300);
    assert.equal((await meToken(s.accessToken)).status, 201);
  });

  test('a membership disabled since sign-in: the access token is refused (401), the refresh answers 403 and ends the session', async () => {
    const { id, tenantId, s } = await secondUser('disabled');
    const d = await t.call('POST', `/identity/resources/tenants/users/v1/${id}/disable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': tenantId },
    });
    assert.ok(d.status < 300, JSON.stringify(d.body));
    const r = await meToken(s.accessToken);
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-20012');
    const refreshed = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: s.refreshToken } });
    assert.equal(refreshed.status, 403, JSON.stringify(refreshed.body));
    assert.equal(refreshed.body.errorCode, 'GH-43004');
    assert.equal(
      (await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: s.refreshToken } })).status,
      401,
      'the session was revoked',
    );
  });

  test('needs a user token', async () => {
    assert.equal((await meToken()).status, 401);
    const v = await meToken(vendor);
    assert.ok(v.status === 401 || v.status === 403, String(v.status));
  });
});
