import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';
import { SoftwareAuthenticator } from '../fixtures/webauthn-authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

let t: TestApp;
let vendor: string;
let origin: string;
let rpId: string;
const A = '/identity/resources/auth/v1';
const M = `${A}/user/mfa/webauthn`;
const U = '/identity/resources/users/v1/mfa/webauthn';
const D = '/identity/resources/users/webauthn/v1/devices';
const STRATEGIES = '/identity/resources/configurations/v1/mfa/strategies';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const login = (email: string, cookie?: string) =>
  t.call('POST', `${A}/user`, { body: { email, password: PASSWORD }, headers: cookie ? { cookie } : {} });
const cookiesOf = (r: { headers: Record<string, unknown> }) => [r.headers['set-cookie'] ?? []].flat() as string[];
const pair = (c: string) => c.split(';')[0];

async function strategy(name: string, isActive: boolean) {
  const r = await t.call('POST', STRATEGIES, { token: vendor, body: { strategy: name, isActive } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}
/** A sign-in that must be challenged: answers its mfaToken and the challenge. */
async function challenged(email: string) {
  const r = await login(email);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
  return r.body;
}
/** Request options for a device of a pending sign-in. */
async function requestFor(mfaToken: string, deviceId: string) {
  const r = await t.call('POST', `${M}/${deviceId}`, { body: { mfaToken } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as { webauthnToken: string; options: any };
}
const verifyAt = (deviceId: string, body: Record<string, unknown>) =>
  t.call('POST', `${M}/${deviceId}/verify`, { body });

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '1000' });
  vendor = await t.vendorToken();
  ({ rpId } = t.ctx.config.webauthn);
  origin = t.ctx.config.webauthn.origins[0];
  await account(t, { id: 'wa-force' });
  await account(t, { id: 'wa-opt' });
  const r = await t.call('PUT', '/identity/resources/configurations/v1/mfa-policy', {
    token: vendor,
    body: { enforceMFAType: 'Force', allowRememberMyDevice: true, mfaDeviceExpiration: 3600 },
    headers: { 'gatehouse-tenant-id': 'wa-force' },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await strategy('WebAuthnPlatform', true);
  await strategy('WebAuthnCrossPlatform', true);
});
after(async () => t?.close());

describe('WebAuthn as the second factor of a sign-in', () => {
  const key = new SoftwareAuthenticator({ origin: '' });
  let email: string;
  let deviceId: string;
  let lastGood: Record<string, unknown>;

  test('forced MFA, no factor: enrol a passkey inside the sign-in and remember the device', async () => {
    Object.assign(key.o, { origin });
    ({ email } = await user(t, 'wa-force'));
    const c = await challenged(email);
    assert.equal(c.mfaEnrolled, false);
    assert.deepEqual(c.mfaDevices.webauthn, []);
    assert.ok(c.mfaStrategies.includes('WebAuthnPlatform'));
    const e = await t.call('POST', `${M}/enroll`, { body: { mfaToken: c.mfaToken } });
    assert.equal(e.status, 201, JSON.stringify(e.body));
    const { options, webauthnToken } = e.body;
    assert.equal(webauthnToken, options.challenge);
    assert.equal(options.rp.id, rpId);
    assert.equal(options.attestation, 'none');
    assert.equal(options.authenticatorSelection.userVerification, 'preferred');
    assert.equal(Buffer.from(options.user.id, 'base64url').toString(), c.userId);
    const cred = key.create(options);
    const v = await t.call('POST', `${M}/enroll/verify`, {
      body: {
        deviceType: 'Platform',
        webauthnToken,
        options: { ...cred, deviceType: 'Platform' },
        mfaToken: c.mfaToken,
        rememberDevice: true,
      },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.ok(v.body.accessToken);
    assert.equal(v.body.recoveryCodes.length, 10);
    const amr = claims(v.body.accessToken).amr as string[];
    assert.ok(amr.includes('mfa') && amr.includes('hwk') && amr.includes('pwd'), amr.join());
    const cookies = cookiesOf(v);
    assert.ok(cookies.some((x) => x.startsWith('gh_refresh=')));
    const remember = cookies.find((x) => x.startsWith('gh_mfa_'));
    assert.ok(remember, cookies.join(' | '));
    // The remembered browser signs in without the second step.
    const again = await login(email, pair(remember));
    assert.equal(again.status, 200);
    assert.equal(again.body.mfaRequired, false, JSON.stringify(again.body));
    assert.ok(again.body.accessToken);
  });

  test('a later sign-in lists the device and is finished with an assertion', async () => {
    const c = await challenged(email);
    assert.equal(c.mfaEnrolled, true);
    assert.equal(c.mfaDevices.webauthn.length, 1);
    deviceId = c.mfaDevices.webauthn[0].id;
    assert.deepEqual(c.mfaDevices.webauthn[0], { id: deviceId, deviceType: 'Platform', name: 'Passkey' });
    const r = await requestFor(c.mfaToken, deviceId);
    assert.equal(r.options.rpId, rpId);
    assert.deepEqual(
      r.options.allowCredentials.map((x: { id: string }) => x.id),
      [key.credentials[0].id],
    );
    lastGood = { webauthnToken: r.webauthnToken, options: key.get(r.options), mfaToken: c.mfaToken };
    const v = await verifyAt(deviceId, lastGood);
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.ok(claims(v.body.accessToken).amr.includes('hwk'));
    assert.equal(
      cookiesOf(v).some((x) => x.startsWith('gh_mfa_')),
      false,
    );
  });

  test('refused with 4xx: wrong signature, wrong origin, replay, expired challenge, counter regression', async () => {
    // A replay of the last good assertion: its challenge is spent.
    let c = await challenged(email);
    let v = await verifyAt(deviceId, { ...lastGood, mfaToken: c.mfaToken });
    assert.equal(v.status, 400);
    assert.equal(v.body.errorCode, 'GH-63101');
    // Wrong signature; the spent challenge cannot be answered again, even correctly.
    let r = await requestFor(c.mfaToken, deviceId);
    v = await verifyAt(deviceId, {
      webauthnToken: r.webauthnToken,
      options: key.get(r.options, { badSignature: true }),
      mfaToken: c.mfaToken,
    });
    assert.equal(v.status, 400, JSON.stringify(v.body));
    assert.equal(v.body.errorCode, 'GH-63102');
    v = await verifyAt(deviceId, { webauthnToken: r.webauthnToken, options: key.get(r.options), mfaToken: c.mfaToken });
    assert.equal(v.status, 400);
    assert.equal(v.body.errorCode, 'GH-63101');
    // Wrong origin.
    r = await requestFor(c.mfaToken, deviceId);
    const evil = key.get(r.options, { origin: 'https://evil.example' });
    v = await verifyAt(deviceId, { webauthnToken: r.webauthnToken, options: evil, mfaToken: c.mfaToken });
    assert.equal(v.status, 400);
    assert.match(v.body.errors[0], /origin/);
    // Expired challenge.
    c = await challenged(email);
    r = await requestFor(c.mfaToken, deviceId);
    await t.db.query("UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE challenge = $1", [
      r.webauthnToken,
    ]);
    v = await verifyAt(deviceId, { webauthnToken: r.webauthnToken, options: key.get(r.options), mfaToken: c.mfaToken });
    assert.equal(v.status, 400);
    assert.equal(v.body.errorCode, 'GH-63101');
    // Counter regression (a cloned authenticator would report an old count).
    r = await requestFor(c.mfaToken, deviceId);
    v = await verifyAt(deviceId, {
      webauthnToken: r.webauthnToken,
      options: key.get(r.options, { signCount: 1 }),
      mfaToken: c.mfaToken,
    });
    assert.equal(v.status, 400, JSON.stringify(v.body));
    assert.equal(v.body.errorCode, 'GH-63103');
    // A webauthnToken of other options, and a device of another user, are refused too.
    r = await requestFor(c.mfaToken, deviceId);
    v = await verifyAt(deviceId, { webauthnToken: 'x'.repeat(43), options: key.get(r.options), mfaToken: c.mfaToken });
    assert.equal(v.status, 400);
    const other = await user(t, 'wa-force');
    const oc = await challenged(other.email);
    const o = await t.call('POST', `${M}/${deviceId}`, { body: { mfaToken: oc.mfaToken } });
    assert.equal(o.status, 404);
    // The proper answer still works (each refusal left the device and the sign-in usable).
    r = await requestFor(c.mfaToken, deviceId);
    v = await verifyAt(deviceId, { webauthnToken: r.webauthnToken, options: key.get(r.options), mfaToken: c.mfaToken });
    assert.equal(v.status, 201, JSON.stringify(v.body));
  });

  test('enrolling inside a sign-in is refused once the user has a factor', async () => {
    const c = await challenged(email);
    const e = await t.call('POST', `${M}/enroll`, { body: { mfaToken: c.mfaToken } });
    assert.equal(e.status, 409);
  });
});

describe('devices and MFA of a signed-in user', () => {
  const key = new SoftwareAuthenticator({ origin: '', attachment: 'cross-platform' });
  let email: string;
  let token: string;

  test('register, list and delete a device', async () => {
    Object.assign(key.o, { origin });
    ({ email } = await user(t, 'wa-opt'));
    ({ accessToken: token } = await signedIn(t, { email }));
    assert.deepEqual((await t.call('GET', D, { token })).body, { devices: [] });
    const o = await t.call('POST', D, { token });
    assert.equal(o.status, 200, JSON.stringify(o.body));
    const cred = key.create(o.body);
    const v = await t.call('POST', `${D}/verify`, { token, body: cred });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.deviceType, 'CrossPlatform');
    // The same answer again: its challenge is spent.
    assert.equal((await t.call('POST', `${D}/verify`, { token, body: cred })).status, 400);
    const list = await t.call('GET', D, { token });
    assert.deepEqual(
      list.body.devices.map((d: { id: string }) => d.id),
      [v.body.id],
    );
    const o2 = await t.call('POST', D, { token });
    assert.deepEqual(
      o2.body.excludeCredentials.map((x: { id: string }) => x.id),
      [cred.id],
    );
    assert.equal((await t.call('DELETE', `${D}/${v.body.id}`, { token })).status, 200);
    assert.deepEqual((await t.call('GET', D, { token })).body, { devices: [] });
    assert.equal((await t.call('DELETE', `${D}/${v.body.id}`, { token })).status, 404);
  });

  test('MFA enrolment, the devices list, and disable with a proof of the device', async () => {
    const e = await t.call('POST', `${U}/enroll`, { token });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    const cred = key.create(e.body.options);
    const v = await t.call('POST', `${U}/enroll/verify`, {
      token,
      body: { deviceType: 'CrossPlatform', webauthnToken: e.body.webauthnToken, options: cred },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.recoveryCodes.length, 10);
    const devices = await t.call('GET', '/identity/resources/users/v1/mfa/devices', { token });
    assert.deepEqual(devices.body.webauthn, [
      { id: v.body.deviceId, deviceType: 'CrossPlatform', name: 'Security key' },
    ]);
    const id = v.body.deviceId;
    // A user must prove the device.
    assert.equal((await t.call('POST', `${U}/${id}/disable/verify`, { token, body: {} })).status, 400);
    let d = await t.call('POST', `${U}/${id}/disable`, { token });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    let r = await t.call('POST', `${U}/${id}/disable/verify`, {
      token,
      body: { webauthnToken: d.body.webauthnToken, options: key.get(d.body.options, { badSignature: true }) },
    });
    assert.equal(r.status, 400);
    assert.equal((await t.call('GET', D, { token })).body.devices.length, 1);
    d = await t.call('POST', `${U}/${id}/disable`, { token });
    r = await t.call('POST', `${U}/${id}/disable/verify`, {
      token,
      body: { webauthnToken: d.body.webauthnToken, options: key.get(d.body.options) },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await t.call('GET', D, { token })).body.devices.length, 0);
    const after = await login(email);
    assert.equal(after.body.mfaRequired, false, 'no factor left: no challenge');
  });

  test('under a forcing policy the last factor stays', async () => {
    const u = await user(t, 'wa-force');
    const k = new SoftwareAuthenticator({ origin });
    const c = await challenged(u.email);
    const e = await t.call('POST', `${M}/enroll`, { body: { mfaToken: c.mfaToken } });
    const v = await t.call('POST', `${M}/enroll/verify`, {
      body: {
        deviceType: 'Platform',
        webauthnToken: e.body.webauthnToken,
        options: k.create(e.body.options),
        mfaToken: c.mfaToken,
      },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const id = (await t.call('GET', D, { token: v.body.accessToken })).body.devices[0].id;
    const r = await t.call('DELETE', `${D}/${id}`, { token: v.body.accessToken });
    assert.equal(r.status >= 400 && r.status < 500, true, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-63006');
  });
});

describe('passkey sign-in (discoverable credentials)', () => {
  const key = new SoftwareAuthenticator({ origin: '', synced: true });
  let u: Awaited<ReturnType<typeof user>>;

  test('prelogin without an email, postlogin with the discoverable credential: session and refresh cookie', async () => {
    Object.assign(key.o, { origin });
    u = await user(t, 'wa-opt');
    const { accessToken: token } = await signedIn(t, { email: u.email });
    const o = await t.call('POST', D, { token });
    assert.equal((await t.call('POST', `${D}/verify`, { token, body: key.create(o.body) })).status, 200);
    const p = await t.call('POST', `${A}/webauthn/prelogin`, { body: {} });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.deepEqual(p.body.allowCredentials, []);
    assert.equal(p.body.userVerification, 'preferred');
    const assertion = key.get(p.body);
    assert.equal(Buffer.from(assertion.response.userHandle, 'base64url').toString(), u.id);
    const r = await t.call('POST', `${A}/webauthn/postlogin`, { body: assertion });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(r.body.accessToken);
    assert.ok(cookiesOf(r).some((x) => x.startsWith('gh_refresh=')));
    // A synced passkey is a software key (RFC 8176 'swk'); with user verification it is also multi-factor.
    assert.deepEqual([...claims(r.body.accessToken).amr].sort(), ['mfa', 'swk', 'user']);
    assert.equal((await t.call('POST', `${A}/webauthn/postlogin`, { body: assertion })).status, 400);
  });

  test('prelogin with an email: the same answer shape for known and unknown addresses', async () => {
    const known = await t.call('POST', `${A}/webauthn/prelogin`, { body: { email: u.email } });
    assert.deepEqual(
      known.body.allowCredentials.map((x: { id: string }) => x.id),
      [key.credentials[0].id],
    );
    const unknown = await t.call('POST', `${A}/webauthn/prelogin`, { body: { email: 'nobody@nowhere.test' } });
    const again = await t.call('POST', `${A}/webauthn/prelogin`, { body: { email: 'nobody@nowhere.test' } });
    assert.equal(unknown.status, known.status);
    assert.deepEqual(Object.keys(unknown.body).sort(), Object.keys(known.body).sort());
    assert.equal(unknown.body.allowCredentials.length, 1);
    assert.equal(unknown.body.allowCredentials[0].id, again.body.allowCredentials[0].id);
    assert.match(unknown.body.allowCredentials[0].id, /^[A-Za-z0-9_-]{43}$/);
    // The known user's assertion against its email's options signs in.
    const r = await t.call('POST', `${A}/webauthn/postlogin`, { body: key.get(known.body) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });

  test('refused: another user handle, an unregistered credential', async () => {
    let p = await t.call('POST', `${A}/webauthn/prelogin`, { body: {} });
    let r = await t.call('POST', `${A}/webauthn/postlogin`, {
      body: key.get(p.body, { userHandle: Buffer.from('00000000-0000-4000-8000-000000000000').toString('base64url') }),
    });
    assert.equal(r.status, 400);
    const stranger = new SoftwareAuthenticator({ origin });
    stranger.create({ rp: { id: rpId }, user: { id: 'eA' }, challenge: 'AAAA' });
    p = await t.call('POST', `${A}/webauthn/prelogin`, { body: {} });
    r = await t.call('POST', `${A}/webauthn/postlogin`, { body: stranger.get(p.body) });
    assert.equal(r.status, 400);
    assert.equal(r.body.errorCode, 'GH-63104');
  });
});

describe('the WebAuthn MFA strategies', () => {
  test('off: a passkey-only user is not challenged; on: the challenge lists its devices', async () => {
    const u = await user(t, 'wa-opt');
    const key = new SoftwareAuthenticator({ origin });
    const { accessToken: token } = await signedIn(t, { email: u.email });
    const o = await t.call('POST', D, { token });
    const dev = await t.call('POST', `${D}/verify`, { token, body: key.create(o.body) });
    assert.equal(dev.status, 200);
    try {
      await strategy('WebAuthnPlatform', false);
      await strategy('WebAuthnCrossPlatform', false);
      const off = await login(u.email);
      assert.equal(off.body.mfaRequired, false, JSON.stringify(off.body));
      assert.equal((await t.call('POST', `${U}/enroll`, { token })).status, 400);
      await strategy('WebAuthnPlatform', true);
      const st = await t.call('GET', STRATEGIES, { token: vendor });
      assert.deepEqual(
        st.body.strategies.filter((s: { strategy: string }) => s.strategy.startsWith('WebAuthn')),
        [
          { strategy: 'WebAuthnPlatform', isActive: true },
          { strategy: 'WebAuthnCrossPlatform', isActive: false },
        ],
      );
      const on = await challenged(u.email);
      assert.equal(on.mfaEnrolled, true);
      assert.deepEqual(on.mfaDevices.webauthn, [{ id: dev.body.id, deviceType: 'Platform', name: 'Passkey' }]);
      assert.deepEqual(on.mfaStrategies, ['AuthenticatorApp', 'SMS', 'WebAuthnPlatform']);
    } finally {
      await strategy('WebAuthnPlatform', true);
      await strategy('WebAuthnCrossPlatform', true);
    }
  });
});

describe('bad input is a 4xx, never a 500', () => {
  test('malformed base64url, missing fields, client data that is not JSON, garbage attestation', async () => {
    const { email } = await user(t, 'wa-opt');
    const { accessToken: token } = await signedIn(t, { email });
    const o = await t.call('POST', D, { token });
    const good = new SoftwareAuthenticator({ origin }).create(o.body);
    const notJson = Buffer.from('not json').toString('base64url');
    const bodies: unknown[] = [
      {},
      { id: good.id },
      { ...good, response: { ...good.response, clientDataJSON: 'not base64!' } },
      { ...good, response: { ...good.response, clientDataJSON: notJson } },
      { ...good, response: { ...good.response, attestationObject: 'AAAA' } },
      { ...good, id: 'has spaces' },
    ];
    for (const body of bodies) {
      const r = await t.call('POST', `${D}/verify`, { token, body });
      assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${JSON.stringify(r.body)}`);
    }
    // The garbage attestation spent the challenge: a good answer to it is refused now.
    assert.equal((await t.call('POST', `${D}/verify`, { token, body: good })).status, 400);
    const p = await t.call('POST', `${A}/webauthn/prelogin`, { body: {} });
    for (const body of [
      {},
      { id: 'x', response: {} },
      { id: 'x', response: { clientDataJSON: notJson, authenticatorData: 'AA', signature: 'AA' } },
      { id: 'x', response: { clientDataJSON: p.body.challenge, authenticatorData: '!!', signature: 'AA' } },
    ]) {
      const r = await t.call('POST', `${A}/webauthn/postlogin`, { body });
      assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${JSON.stringify(r.body)}`);
    }
    for (const [path, body] of [
      [`${M}/enroll`, {}],
      [`${M}/enroll/verify`, { mfaToken: 'x' }],
      [`${M}/not-a-uuid`, { mfaToken: 'x' }],
      [`${M}/00000000-0000-4000-8000-000000000000`, { mfaToken: 'unknown' }],
    ] as const) {
      const r = await t.call('POST', path, { body });
      assert.ok(r.status >= 400 && r.status < 500, `${path} ${r.status} ${JSON.stringify(r.body)}`);
    }
  });
});
