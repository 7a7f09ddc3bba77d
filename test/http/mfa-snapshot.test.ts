import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { totpCode } from '../../src/modules/mfa/totp.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

// The TOTP verify from the challenge's snapshot (src/modules/mfa/pending.ts): whatever changes between the challenge
// and the code, the verify answers as if it had read everything again. Each case changes one thing the snapshot
// holds after the challenge, then sends the right code.

let t: TestApp;
let vendor: string;
const A = '/identity/resources/auth/v1';
const M = `${A}/user/mfa`;
const U = '/identity/resources/users/v1/mfa';
const ACCOUNT = 'mfa-snap';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const login = (email: string) => t.call('POST', `${A}/user`, { body: { email, password: PASSWORD } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const H = { 'gatehouse-tenant-id': ACCOUNT };

/** A fresh code of the user's authenticator (a step not used before, never in a step's last second). */
async function codeOf(secret: string, used: { step: number }) {
  while (Date.now() % 30_000 > 29_000) await sleep(100);
  const now = Math.floor(Date.now() / 30_000);
  used.step = Math.max(now - 1, used.step + 1);
  return totpCode(secret, used.step);
}

/** A user of the account with an authenticator enrolled, and a pending sign-in (its mfaToken and a fresh code). */
async function challenged(email: string, tenantId = ACCOUNT) {
  const u = await user(t, tenantId, { email });
  const first = await signedIn(t, u);
  const e = await t.call('POST', `${U}/authenticator/enroll`, { token: first.accessToken });
  const secret = new URL(e.body.uri).searchParams.get('secret')!;
  const used = { step: -Infinity };
  const v = await t.call('POST', `${U}/authenticator/enroll/verify`, {
    token: first.accessToken,
    body: { token: await codeOf(secret, used) },
  });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  const r = await login(email);
  assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
  return { userId: u.id, mfaToken: r.body.mfaToken as string, code: await codeOf(secret, used) };
}
const verify = (mfaToken: string, value: string) => t.call('POST', `${M}/verify`, { body: { mfaToken, value } });

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000' });
  vendor = await t.vendorToken();
  await account(t, { id: ACCOUNT });
});
after(async () => {
  await t?.close();
});

describe('TOTP verify after a change made since the challenge', () => {
  test('nothing changed: the sign-in finishes', async () => {
    const p = await challenged('same@snap.test');
    const v = await verify(p.mfaToken, p.code);
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.equal(claims(v.body.accessToken).sub, p.userId);
  });

  test('the user was locked: refused as locked, no session', async () => {
    const p = await challenged('locked@snap.test');
    assert.equal(
      (await t.call('POST', `/identity/resources/users/v1/${p.userId}/lock`, { token: vendor })).status,
      200,
    );
    const v = await verify(p.mfaToken, p.code);
    assert.equal(v.status, 403, JSON.stringify(v.body));
    assert.match(JSON.stringify(v.body), /lock/i);
    const { rows } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM sessions WHERE user_id = $1 AND amr @> ARRAY['otp']",
      [p.userId],
    );
    assert.equal(rows[0].n, 0);
  });

  test('the user was disabled in the account: no access there', async () => {
    const p = await challenged('disabled@snap.test');
    const d = await t.call('POST', `/identity/resources/tenants/users/v1/${p.userId}/disable`, {
      token: vendor,
      headers: H,
    });
    assert.ok([200, 201].includes(d.status), JSON.stringify(d.body));
    const v = await verify(p.mfaToken, p.code);
    assert.notEqual(v.status, 201, JSON.stringify(v.body));
    assert.equal(v.body.accessToken, undefined);
  });

  test('a role was assigned: the token carries it', async () => {
    const p = await challenged('roles@snap.test');
    const role = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      headers: H,
      body: [{ key: 'snap-auditor', name: 'Snap auditor', level: 5 }],
    });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    const assign = await t.call('POST', `/identity/resources/users/v1/${p.userId}/roles`, {
      token: vendor,
      headers: H,
      body: { roleIds: [role.body[0].id] },
    });
    assert.equal(assign.status, 201, JSON.stringify(assign.body));
    const v = await verify(p.mfaToken, p.code);
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.ok(
      claims(v.body.accessToken).roles.includes('snap-auditor'),
      JSON.stringify(claims(v.body.accessToken).roles),
    );
  });

  test('the mfaToken expired or used its attempts elsewhere: refused as invalid', async () => {
    const expired = await challenged('expired@snap.test');
    await t.db.query("UPDATE mfa_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
      expired.userId,
    ]);
    const v1 = await verify(expired.mfaToken, expired.code);
    assert.equal(v1.status, 401, JSON.stringify(v1.body));
    const spent = await challenged('spent@snap.test');
    await t.db.query('UPDATE mfa_tokens SET failures = 5 WHERE user_id = $1', [spent.userId]);
    const v2 = await verify(spent.mfaToken, spent.code);
    assert.equal(v2.status, 401, JSON.stringify(v2.body));
  });

  test('the user was deleted: refused as invalid', async () => {
    const p = await challenged('deleted@snap.test');
    assert.equal((await t.call('DELETE', `/identity/resources/users/v1/${p.userId}`, { token: vendor })).status, 200);
    const v = await verify(p.mfaToken, p.code);
    assert.equal(v.status, 401, JSON.stringify(v.body));
  });

  test('the account was deleted: no sign-in', async () => {
    const other = 'mfa-snap-gone';
    assert.equal(
      (await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId: other, name: other } }))
        .status,
      201,
    );
    const p = await challenged('gone@snap.test', other);
    assert.equal((await t.call('DELETE', `/tenants/resources/tenants/v1/${other}`, { token: vendor })).status, 200);
    const v = await verify(p.mfaToken, p.code);
    assert.notEqual(v.status, 201, JSON.stringify(v.body));
    assert.equal(v.body.accessToken, undefined);
  });
});
