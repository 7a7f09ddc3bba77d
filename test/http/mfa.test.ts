import assert from 'node:assert/strict';
import { AsyncResource } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import * as argon2 from '@node-rs/argon2';
import { after, before, describe, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { matchTotp, totpCode } from '../../src/modules/mfa/totp.ts';
import { Authenticator } from '../helpers/authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const A = '/identity/resources/auth/v1';
const M = `${A}/user/mfa`;
const U = '/identity/resources/users/v1/mfa';
const P = '/identity/resources/configurations/v1/mfa-policy';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const login = (email: string, headers: Record<string, string> = {}) =>
  t.call('POST', `${A}/user`, { body: { email, password: PASSWORD }, headers });

const secretOf = (uri: string) => new URL(uri).searchParams.get('secret')!;

async function policy(tenantId: string, body: Record<string, unknown>) {
  const r = await t.call('PUT', P, { token: vendor, body, headers: { 'gatehouse-tenant-id': tenantId } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}
/** Signs in (no MFA yet) and enrols an authenticator through the self-service routes; answers the app and codes. */
async function enrolled(email: string) {
  const { accessToken: token } = await signedIn(t, { email }); // no MFA before enrolment
  const e = await t.call('POST', `${U}/authenticator/enroll`, { token });
  assert.equal(e.status, 200, JSON.stringify(e.body));
  const app = new Authenticator(secretOf(e.body.uri));
  const v = await t.call('POST', `${U}/authenticator/enroll/verify`, { token, body: { token: await app.code() } });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return { app, token, recoveryCodes: v.body.recoveryCodes as string[], deviceId: v.body.deviceId as string };
}
async function events(userId: string, key: string) {
  const { rows } = await t.db.query('SELECT data FROM events WHERE event_key = $1 AND entity_id = $2', [key, userId]);
  return rows;
}

before(async () => {
  t = await startTestApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '12' });
  vendor = await t.vendorToken();
  for (const a of ['mfa-opt', 'mfa-force', 'mfa-off', 'mfa-rem', 'mfa-lock', 'mfa-mig']) await account(t, { id: a });
  await policy('mfa-force', { enforceMFAType: 'Force' });
  await policy('mfa-off', { enforceMFAType: 'Off' });
  await policy('mfa-rem', { allowRememberMyDevice: true, mfaDeviceExpiration: 3600 });
});
after(async () => t?.close());

describe('TOTP (RFC 6238 Appendix B vectors, through otpauth as the server uses it)', () => {
  const secrets = {
    SHA1: OTPAuth.Secret.fromUTF8('12345678901234567890'),
    SHA256: OTPAuth.Secret.fromUTF8('12345678901234567890123456789012'),
    SHA512: OTPAuth.Secret.fromUTF8('1234567890123456789012345678901234567890123456789012345678901234'),
  } as const;
  const vectors: [number, string, string, string][] = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];
  for (const [time, sha1, sha256, sha512] of vectors) {
    test(`T = ${time}`, () => {
      const step = Math.floor(time / 30);
      assert.equal(totpCode(secrets.SHA1, step, { algorithm: 'SHA1', digits: 8 }), sha1);
      assert.equal(totpCode(secrets.SHA256, step, { algorithm: 'SHA256', digits: 8 }), sha256);
      assert.equal(totpCode(secrets.SHA512, step, { algorithm: 'SHA512', digits: 8 }), sha512);
    });
  }
  test('the server window is one step either side, and answers the step that matched', () => {
    const secret = secrets.SHA1.base32;
    const now = 1111111111_000;
    const step = Math.floor(now / 30_000);
    for (const d of [-1, 0, 1]) assert.equal(matchTotp(secret, totpCode(secret, step + d), now), step + d);
    for (const d of [-2, 2]) assert.equal(matchTotp(secret, totpCode(secret, step + d), now), undefined);
    assert.equal(matchTotp(secret, 'abcdef', now), undefined);
  });
});

describe('MFA policy routes', () => {
  test('the environment default is optional MFA; POST there is 409, PATCH changes it', async () => {
    const g = await t.call('GET', P, { token: vendor });
    assert.equal(g.status, 200);
    assert.equal(g.body.enforceMFAType, 'DontForce');
    assert.equal(g.body.tenantId, null);
    assert.equal(g.body.allowRememberMyDevice, false);
    assert.equal(g.body.mfaDeviceExpiration, 1209600);
    assert.equal((await t.call('POST', P, { token: vendor, body: { enforceMFAType: 'Force' } })).status, 409);
    const v = await t.call('GET', `${P}/vendor`, { token: vendor });
    assert.equal(v.body.id, g.body.id);
  });
  test('an account inherits until it has its own; POST / PATCH / PUT; bad input is 400; unknown account 404', async () => {
    await account(t, { id: 'mfa-pol' });
    const h = { 'gatehouse-tenant-id': 'mfa-pol' };
    const g = await t.call('GET', P, { token: vendor, headers: h });
    assert.equal(g.body.tenantId, null);
    assert.equal(
      (await t.call('PATCH', P, { token: vendor, headers: h, body: { enforceMFAType: 'Force' } })).status,
      404,
    );
    const c = await t.call('POST', P, { token: vendor, headers: h, body: { enforceMFAType: 'Force' } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.tenantId, 'mfa-pol');
    assert.equal(c.body.mfaDeviceExpiration, 1209600);
    const p = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true } });
    assert.equal(p.status, 200);
    assert.equal(p.body.enforceMFAType, 'Force');
    assert.equal(p.body.allowRememberMyDevice, true);
    assert.equal(
      (await t.call('PUT', P, { token: vendor, headers: h, body: { enforceMFAType: 'Sometimes' } })).status,
      400,
    );
    assert.equal((await t.call('PUT', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 5 } })).status, 400);
    assert.equal(
      (
        await t.call('PUT', P, {
          token: vendor,
          headers: { 'gatehouse-tenant-id': 'no-such' },
          body: { enforceMFAType: 'Force' },
        })
      ).status,
      404,
    );
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.enforceMFAType, 'Force');
  });
  test('user tokens need the security-policy permissions', async () => {
    const weak = await t.userToken({ tenantId: 'mfa-pol' });
    assert.equal((await t.call('GET', P, { token: weak })).status, 403);
    const reader = await t.userToken({ tenantId: 'mfa-pol', permissions: ['fe.secure.read.securityPolicy'] });
    const r = await t.call('GET', P, { token: reader });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'mfa-pol');
    assert.equal((await t.call('PUT', P, { token: reader, body: { enforceMFAType: 'Off' } })).status, 403);
  });
  test('configuration and strategies (environment token only)', async () => {
    const g = await t.call('GET', '/identity/resources/configurations/v1/mfa', { token: vendor });
    assert.equal(g.status, 200);
    assert.equal(g.body.authenticationApp.active, true);
    const s = await t.call('POST', '/identity/resources/configurations/v1/mfa', {
      token: vendor,
      body: { authenticationApp: { active: true, serviceName: 'Acme' } },
    });
    assert.equal(s.status, 201);
    assert.equal(s.body.authenticationApp.serviceName, 'Acme');
    const st = await t.call('GET', '/identity/resources/configurations/v1/mfa/strategies', { token: vendor });
    assert.deepEqual(
      st.body.strategies.find((x: any) => x.strategy === 'AuthenticatorApp'),
      { strategy: 'AuthenticatorApp', isActive: true },
    );
    // WebAuthn strategies are real (src/modules/webauthn): turned on and off like the others.
    for (const isActive of [true, false]) {
      const w = await t.call('POST', '/identity/resources/configurations/v1/mfa/strategies', {
        token: vendor,
        body: { strategy: 'WebAuthnPlatform', isActive },
      });
      assert.equal(w.status, 201);
      const now = await t.call('GET', '/identity/resources/configurations/v1/mfa/strategies', { token: vendor });
      assert.equal(now.body.strategies.find((x: any) => x.strategy === 'WebAuthnPlatform').isActive, isActive);
    }
    assert.equal(
      (
        await t.call('GET', '/identity/resources/configurations/v1/mfa', {
          token: await t.userToken({ tenantId: 'mfa-opt' }),
        })
      ).status,
      403,
    );
  });
});

describe('authenticator app: enrol, sign in, codes', () => {
  test('self-service enrolment: QR data URL and otpauth URI, wrong code refused, recovery codes once, devices listed, event', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'enrol@opt.test' });
    const r = await login('enrol@opt.test');
    const token = r.body.accessToken;
    const e = await t.call('POST', `${U}/enroll`, { token });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    assert.match(e.body.qrCode, /^data:image\/png;base64,/);
    assert.match(
      e.body.uri,
      /^otpauth:\/\/totp\/Acme:enrol%40opt\.test\?issuer=Acme&secret=[A-Z2-7]{32}&algorithm=SHA1&digits=6&period=30$/,
    );
    const app = new Authenticator(secretOf(e.body.uri));
    const bad = await t.call('POST', `${U}/enroll/verify`, {
      token,
      body: { token: '000000' === (await app.code()) ? '111111' : '000000' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-63002');
    const v = await t.call('POST', `${U}/enroll/verify`, { token, body: { token: await app.code() } });
    assert.equal(v.status, 200, JSON.stringify(v.body));
    assert.equal(v.body.recoveryCodes.length, 10);
    assert.equal(new Set(v.body.recoveryCodes).size, 10);
    assert.equal(v.body.recoveryCode, v.body.recoveryCodes[0]);
    const { rows } = await t.db.query('SELECT code_hash FROM mfa_recovery_codes WHERE user_id = $1', [id]);
    assert.equal(rows.length, 10);
    assert.ok(
      rows.every((x: any) => !v.body.recoveryCodes.includes(x.code_hash)),
      'stored hashed',
    );
    const d = await t.call('GET', `${U}/devices`, { token });
    assert.equal(d.status, 200);
    assert.deepEqual(d.body.authenticators, [{ id: v.body.deviceId }]);
    const me = await t.call('GET', '/identity/resources/users/v2/me', { token });
    assert.equal(me.body.mfaEnrolled, true);
    assert.equal((await events(id, 'user.mfa_enrolled')).length, 1);
    const { rows: dev } = await t.db.query('SELECT secret_enc FROM mfa_devices WHERE user_id = $1', [id]);
    assert.ok(!String(dev[0].secret_enc).includes(secretOf(e.body.uri)), 'secret sealed');
  });

  test('sign-in asks for the second factor; the code finishes it with amr, acr and auth_time; the mfaToken is single-use', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'signin@opt.test' });
    const { app } = await enrolled('signin@opt.test');
    const r = await login('signin@opt.test');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaRequired, true);
    assert.ok(r.body.mfaToken);
    assert.equal(r.body.accessToken, undefined);
    assert.equal(r.body.refreshToken, undefined);
    assert.equal(r.headers['set-cookie'], undefined);
    assert.equal(r.body.mfaEnrolled, true);
    assert.equal(r.body.userId, id);
    assert.equal(r.body.mfaDevices.authenticators.length, 1);
    const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.equal(v.body.mfaRequired, false);
    const c = claims(v.body.accessToken);
    assert.deepEqual(c.amr, ['pwd', 'mfa', 'otp']);
    assert.equal(c.acr, 'http://schemas.openid.net/pape/policies/2007/06/multi-factor');
    assert.ok(Math.abs(c.auth_time - Date.now() / 1000) < 60);
    assert.match(String(v.headers['set-cookie']), /gh_refresh=/);
    // The refresh keeps amr and acr.
    const rf = await t.call('POST', `${A}/user/token/refresh`, { body: { refreshToken: v.body.refreshToken } });
    assert.equal(rf.status, 201);
    assert.deepEqual(claims(rf.body.accessToken).amr, ['pwd', 'mfa', 'otp']);
    assert.ok(claims(rf.body.accessToken).acr);
    const again = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(again.status, 401);
    assert.equal(again.body.errorCode, 'GH-63001');
  });

  test('a code is single-use: the same code in another sign-in is refused; a wrong code too; by device id', async () => {
    await user(t, 'mfa-opt', { email: 'reuse@opt.test' });
    const { app, deviceId } = await enrolled('reuse@opt.test');
    const r1 = await login('reuse@opt.test');
    const code = await app.code();
    assert.equal(
      (
        await t.call('POST', `${M}/authenticator/${deviceId}/verify`, {
          body: { mfaToken: r1.body.mfaToken, value: code },
        })
      ).status,
      201,
    );
    const r2 = await login('reuse@opt.test');
    const replay = await t.call('POST', `${M}/verify`, { body: { mfaToken: r2.body.mfaToken, value: code } });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.errorCode, 'GH-63003');
    const wrong = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r2.body.mfaToken, value: code === '123456' ? '654321' : '123456' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-63002');
    const other = await t.call('POST', `${M}/authenticator/00000000-0000-4000-8000-000000000000/verify`, {
      body: { mfaToken: r2.body.mfaToken, value: '123456' },
    });
    assert.equal(other.status, 404);
    const ok = await t.call('POST', `${M}/verify`, { body: { mfaToken: r2.body.mfaToken, value: await app.code() } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('an expired mfaToken is refused; malformed bodies are 400', async () => {
    await user(t, 'mfa-opt', { email: 'expired@opt.test' });
    const { app } = await enrolled('expired@opt.test');
    const r = await login('expired@opt.test');
    await t.db.query("UPDATE mfa_tokens SET expires_at = now() - interval '1 second'");
    const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(v.status, 401);
    assert.equal((await t.call('POST', `${M}/verify`, { body: { mfaToken: 'x' } })).status, 400);
    assert.equal((await t.call('POST', `${M}/verify`, { body: { value: '123456' } })).status, 400);
  });
});

describe('policy at sign-in', () => {
  test('optional: a user without a factor gets tokens at once', async () => {
    await user(t, 'mfa-opt', { email: 'plain@opt.test' });
    const r = await login('plain@opt.test');
    assert.equal(r.status, 200);
    assert.ok(r.body.accessToken);
    assert.deepEqual(claims(r.body.accessToken).amr, ['pwd']);
    assert.equal(claims(r.body.accessToken).acr, undefined);
  });

  test('forced: a user without a factor enrols during the sign-in, then finishes it; enrolling again that way is 409', async () => {
    const { id } = await user(t, 'mfa-force', { email: 'forced@force.test' });
    const r = await login('forced@force.test');
    assert.equal(r.status, 200);
    assert.equal(r.body.mfaRequired, true);
    assert.equal(r.body.mfaEnrolled, false);
    assert.ok(r.body.mfaStrategies.includes('AuthenticatorApp'));
    const e = await t.call('POST', `${M}/authenticator/enroll`, { body: { mfaToken: r.body.mfaToken } });
    assert.equal(e.status, 201, JSON.stringify(e.body));
    assert.match(e.body.qrCode, /^data:image\/png;base64,/);
    const app = new Authenticator(secretOf(e.body.uri));
    const v = await t.call('POST', `${M}/authenticator/enroll/verify`, {
      body: { mfaToken: r.body.mfaToken, token: await app.code() },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.ok(v.body.accessToken);
    assert.equal(v.body.recoveryCodes.length, 10);
    assert.deepEqual(claims(v.body.accessToken).amr, ['pwd', 'mfa', 'otp']);
    assert.equal((await events(id, 'user.mfa_enrolled')).length, 1);
    // Now enrolled: a password alone cannot add another authenticator through a sign-in.
    const r2 = await login('forced@force.test');
    assert.equal(r2.body.mfaEnrolled, true);
    assert.equal(
      (await t.call('POST', `${M}/authenticator/enroll`, { body: { mfaToken: r2.body.mfaToken } })).status,
      409,
    );
  });

  test('off: an enrolled user gets tokens with the password alone', async () => {
    await user(t, 'mfa-off', { email: 'off@off.test' });
    await enrolled('off@off.test');
    const r = await login('off@off.test');
    assert.equal(r.body.mfaRequired, false);
    assert.ok(r.body.accessToken, JSON.stringify(r.body));
    const me = await t.call('GET', '/identity/resources/users/v2/me', { token: r.body.accessToken });
    assert.equal(me.body.mfaEnrolled, true);
  });

  test('bypass: an MFA-bypass user signs in without the second factor even when forced', async () => {
    const { id } = await user(t, 'mfa-force', { email: 'bypass@force.test' });
    assert.equal((await login('bypass@force.test')).body.mfaRequired, true);
    const u = await t.call('PUT', `/identity/resources/users/v1/${id}`, { token: vendor, body: { mfaBypass: true } });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    const r = await login('bypass@force.test');
    assert.equal(r.body.mfaRequired, false);
    assert.ok(r.body.accessToken);
  });

  test('remember device: the cookie skips MFA for that user only, until it expires; only when the policy allows', async () => {
    await user(t, 'mfa-rem', { email: 'rem@rem.test' });
    const { app } = await enrolled('rem@rem.test');
    const r = await login('rem@rem.test');
    assert.equal(r.body.allowRememberMyDevice, true);
    const allow = await t.call('GET', `${P}/allow-remember-device?mfaToken=${encodeURIComponent(r.body.mfaToken)}`);
    assert.equal(allow.status, 200);
    assert.equal(allow.body.allowRememberDevice, true);
    const v = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: await app.code(), rememberDevice: true },
    });
    assert.equal(v.status, 201);
    const cookies = ([] as string[]).concat(v.headers['set-cookie'] as string[]);
    const remember = cookies.find((c) => c.startsWith('gh_mfa_'));
    assert.ok(remember, JSON.stringify(cookies));
    assert.match(remember!, /HttpOnly/);
    assert.match(remember!, /Max-Age=3600/);
    const pair = remember!.split(';')[0];
    const skipped = await login('rem@rem.test', { cookie: pair });
    assert.ok(skipped.body.accessToken, JSON.stringify(skipped.body));
    assert.equal((await login('rem@rem.test', { cookie: `${pair.split('=')[0]}=forged` })).body.mfaRequired, true);
    assert.equal((await login('rem@rem.test')).body.mfaRequired, true);
    // Another user presenting this cookie under its own name gets nothing from it.
    await user(t, 'mfa-rem', { email: 'rem2@rem.test' });
    await enrolled('rem2@rem.test');
    assert.equal((await login('rem2@rem.test', { cookie: pair })).body.mfaRequired, true);
    // Expired.
    await t.db.query("UPDATE mfa_remembered_devices SET expires_at = now() - interval '1 second'");
    assert.equal((await login('rem@rem.test', { cookie: pair })).body.mfaRequired, true);
  });

  test('remember device is ignored where the policy does not allow it', async () => {
    await user(t, 'mfa-opt', { email: 'norem@opt.test' });
    const { app } = await enrolled('norem@opt.test');
    const r = await login('norem@opt.test');
    const v = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: await app.code(), rememberDevice: true },
    });
    assert.equal(v.status, 201);
    assert.ok(!([] as string[]).concat(v.headers['set-cookie'] as string[]).some((c) => c.startsWith('gh_mfa_')));
  });
});

describe('recovery codes', () => {
  test('a recovery code removes the factors once; a wrong or spent code is refused; unknown email answers the same', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'recover@opt.test' });
    const { recoveryCodes } = await enrolled('recover@opt.test');
    assert.equal((await login('recover@opt.test')).body.mfaRequired, true);
    const wrong = await t.call('POST', `${M}/recover`, {
      body: { email: 'recover@opt.test', recoveryCode: 'aaaa-bbbb-cccc' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errorCode, 'GH-63009');
    const unknown = await t.call('POST', `${M}/recover`, {
      body: { email: 'nobody@opt.test', recoveryCode: recoveryCodes[1] },
    });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, wrong.body);
    const ok = await t.call('POST', `${M}/recover`, {
      body: { email: 'Recover@opt.test', recoveryCode: recoveryCodes[1].toUpperCase() },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const r = await login('recover@opt.test');
    assert.ok(r.body.accessToken, 'optional MFA and no factor left');
    assert.equal((await events(id, 'user.mfa_removed')).length, 1);
    const spent = await t.call('POST', `${M}/recover`, {
      body: { email: 'recover@opt.test', recoveryCode: recoveryCodes[1] },
    });
    assert.equal(spent.status, 400);
    const other = await t.call('POST', `${M}/recover`, {
      body: { email: 'recover@opt.test', recoveryCode: recoveryCodes[2] },
    });
    assert.equal(other.status, 400, 'all codes go with the factors');
  });
});

describe('removing factors', () => {
  test('a user removes a device with a current code; a wrong code is refused; the last one under a forced policy is 409', async () => {
    const { id } = await user(t, 'mfa-force', { email: 'remove@force.test' });
    const r = await login('remove@force.test');
    const e = await t.call('POST', `${M}/authenticator/enroll`, { body: { mfaToken: r.body.mfaToken } });
    const app = new Authenticator(secretOf(e.body.uri));
    const v = await t.call('POST', `${M}/authenticator/enroll/verify`, {
      body: { mfaToken: r.body.mfaToken, token: await app.code() },
    });
    const token = v.body.accessToken;
    const wrong = await t.call('POST', `${U}/disable`, { token, body: { token: '000000' } });
    assert.equal(wrong.status, 400);
    const missing = await t.call('POST', `${U}/disable`, { token, body: {} });
    assert.equal(missing.status, 400);
    const last = await t.call('POST', `${U}/disable`, { token, body: { token: await app.code() } });
    assert.equal(last.status, 409, JSON.stringify(last.body));
    assert.equal(last.body.errorCode, 'GH-63006');
    // An administrator may remove everything.
    const un = await t.call('POST', `/identity/resources/vendor-only/users/v1/${id}/mfa/unenroll`, { token: vendor });
    assert.equal(un.status, 200);
    assert.equal((await t.call('GET', `${U}/devices`, { token })).body.authenticators.length, 0);
    assert.equal((await events(id, 'user.mfa_removed')).length, 1);
  });

  test('optional policy: removing the only device by id ends MFA for the user', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'remove@opt.test' });
    const { app, token, deviceId } = await enrolled('remove@opt.test');
    const d = await t.call('POST', `${U}/authenticator/${deviceId}/disable/verify`, {
      token,
      body: { token: await app.code() },
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const me = await t.call('GET', '/identity/resources/users/v2/me', { token });
    assert.equal(me.body.mfaEnrolled, false);
    assert.ok((await login('remove@opt.test')).body.accessToken);
    assert.equal((await events(id, 'user.mfa_removed')).length, 1);
  });

  test('an environment token acts on the user of gatehouse-user-id (header required)', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'vendor@opt.test' });
    assert.equal((await t.call('GET', `${U}/devices`, { token: vendor })).status, 400);
    const e = await t.call('POST', `${U}/enroll`, { token: vendor, headers: { 'gatehouse-user-id': id } });
    assert.equal(e.status, 200);
    const app = new Authenticator(secretOf(e.body.uri));
    assert.equal(
      (
        await t.call('POST', `${U}/enroll/verify`, {
          token: vendor,
          headers: { 'gatehouse-user-id': id },
          body: { token: await app.code() },
        })
      ).status,
      200,
    );
    const l = await t.call('GET', `${U}/devices`, { token: vendor, headers: { 'gatehouse-user-id': id } });
    assert.equal(l.body.authenticators.length, 1);
  });
});

describe('lockout and rate limits', () => {
  test('wrong codes count toward lockout: the user is locked, the mfaToken is burnt', async () => {
    await user(t, 'mfa-lock', { email: 'lock@lock.test' });
    const { app } = await enrolled('lock@lock.test');
    const r = await login('lock@lock.test');
    const good = await app.code();
    const bad = good === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: bad } });
      assert.equal(v.status, 400, `attempt ${i + 1}: ${JSON.stringify(v.body)}`);
    }
    const after = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: good } });
    assert.equal(after.status, 401, 'the token is burnt after 5 wrong codes');
    const again = await login('lock@lock.test');
    assert.equal(again.status, 403);
    assert.equal(again.body.errorCode, 'GH-43005');
  });

  test('too many code attempts for one user is 429 with retry-after', async () => {
    await account(t, { id: 'mfa-nolock' });
    const lp = await t.call('POST', '/identity/resources/configurations/v1/lockout-policy', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'mfa-nolock' },
      body: { enabled: false, maxAttempts: 5 },
    });
    assert.equal(lp.status, 201, JSON.stringify(lp.body));
    await user(t, 'mfa-nolock', { email: 'rate@nolock.test' });
    await enrolled('rate@nolock.test');
    let limited: any;
    for (let round = 0; round < 4 && !limited; round++) {
      const r = await login('rate@nolock.test');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      for (let i = 0; i < 5 && !limited; i++) {
        const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: '000001' } });
        if (v.status === 429) limited = v;
        else assert.equal(v.status, 400);
      }
    }
    assert.ok(limited, 'no 429 within 20 attempts at a limit of 12');
    assert.ok(Number(limited.headers['retry-after']) > 0);
  });
});

describe('migrated users', () => {
  test('an imported authenticator secret signs in on day one', async () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const hash = await argon2.hash(PASSWORD);
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: {
        email: 'migrated@mig.test',
        tenantId: 'mfa-mig',
        passwordHash: hash,
        passwordHashType: 'argon2',
        authenticatorAppMfaSecret: secret,
        verifyUser: true,
      },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    assert.equal(m.body.mfaEnrolled, true);
    const r = await login('migrated@mig.test');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaRequired, true);
    assert.equal(r.body.mfaEnrolled, true);
    assert.equal(r.body.mfaDevices.authenticators.length, 1);
    const app = new Authenticator(secret);
    const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.deepEqual(claims(v.body.accessToken).amr, ['pwd', 'mfa', 'otp']);
    // The secret now lives in one device, sealed; the next sign-in uses the same device.
    const { rows } = await t.db.query(
      'SELECT d.source, u.authenticator_mfa_secret_enc FROM mfa_devices d JOIN users u ON u.id = d.user_id WHERE u.email = $1',
      ['migrated@mig.test'],
    );
    assert.deepEqual(
      rows.map((x: any) => [x.source, x.authenticator_mfa_secret_enc]),
      [['migrated', null]],
    );
    const r2 = await login('migrated@mig.test');
    assert.equal(
      (await t.call('POST', `${M}/verify`, { body: { mfaToken: r2.body.mfaToken, value: await app.code() } })).status,
      201,
    );
  });

  test('a phone number of type mfa is an SMS factor at the first sign-in', async () => {
    const hash = await argon2.hash(PASSWORD);
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: {
        email: 'migsms@mig.test',
        tenantId: 'mfa-mig',
        passwordHash: hash,
        passwordHashType: 'argon2',
        phoneNumber: '+15550009999',
        phoneNumberType: 'mfa',
        verifyUser: true,
      },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const r = await login('migsms@mig.test');
    assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
    assert.equal(r.body.mfaDevices.phones.length, 1);
    assert.match(r.body.mfaDevices.phones[0].phoneNumber, /^\+15\*+99$/);
  });
});

describe('sign-in reads (the cached configuration and the one-statement verify)', () => {
  test('a policy or configuration change applies to the very next sign-in and verify', async () => {
    await account(t, { id: 'mfa-flip' });
    await user(t, 'mfa-flip', { email: 'flip@flip.test' });
    const { app } = await enrolled('flip@flip.test');
    assert.equal((await login('flip@flip.test')).body.mfaRequired, true);
    await policy('mfa-flip', { enforceMFAType: 'Off' });
    const off = await login('flip@flip.test');
    assert.equal(off.body.mfaRequired, false);
    assert.ok(off.body.accessToken, JSON.stringify(off.body));
    await policy('mfa-flip', { enforceMFAType: 'DontForce' });
    const pending = await login('flip@flip.test');
    assert.equal(pending.body.mfaRequired, true);
    const S = '/identity/resources/configurations/v1/mfa/strategies';
    assert.ok(
      (await t.call('POST', S, { token: vendor, body: { strategy: 'AuthenticatorApp', isActive: false } })).status <
        300,
    );
    try {
      // The authenticator is no usable factor now: no challenge, and a pending sign-in cannot finish with it.
      const v = await t.call('POST', `${M}/verify`, {
        body: { mfaToken: pending.body.mfaToken, value: await app.code() },
      });
      assert.equal(v.status, 400);
      assert.equal(v.body.errorCode, 'GH-63007');
      const r = await login('flip@flip.test');
      assert.equal(r.body.mfaRequired, false);
      assert.ok(r.body.accessToken, JSON.stringify(r.body));
    } finally {
      assert.ok(
        (await t.call('POST', S, { token: vendor, body: { strategy: 'AuthenticatorApp', isActive: true } })).status <
          300,
      );
    }
    assert.equal((await login('flip@flip.test')).body.mfaRequired, true);
  });

  test('account access is checked again at the code: a membership disabled after the password refuses the verify', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'gone@opt.test' });
    const { app } = await enrolled('gone@opt.test');
    const ok = await login('gone@opt.test');
    const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: ok.body.mfaToken, value: await app.code() } });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.equal(claims(v.body.accessToken).tenantId, 'mfa-opt');
    assert.deepEqual(claims(v.body.accessToken).tenantIds, ['mfa-opt']);
    const r = await login('gone@opt.test');
    assert.equal(r.body.mfaRequired, true);
    const d = await t.call('POST', `/identity/resources/tenants/users/v1/${id}/disable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'mfa-opt' },
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const refused = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: await app.code() },
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.errorCode, 'GH-43004');
  });

  test('the verify runs the request gates again: an address blocked after the password cannot finish the sign-in', async () => {
    await account(t, { id: 'mfa-ip' });
    await user(t, 'mfa-ip', { email: 'ip@ip.test' });
    const { app } = await enrolled('ip@ip.test');
    const r = await t.call('POST', `${A}/user`, {
      body: { email: 'ip@ip.test', password: PASSWORD },
      remoteAddress: '198.51.100.7',
    });
    assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
    const IP = '/identity/resources/configurations/v1/restrictions/ip';
    const h = { 'gatehouse-tenant-id': 'mfa-ip' };
    assert.equal(
      (await t.call('POST', IP, { token: vendor, body: { ip: '198.51.100.7/32', strategy: 'BLOCK' }, headers: h }))
        .status,
      201,
    );
    assert.equal(
      (await t.call('POST', `${IP}/config`, { token: vendor, body: { strategy: 'BLOCK', isActive: true }, headers: h }))
        .status,
      201,
    );
    const blocked = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: await app.code() },
      remoteAddress: '198.51.100.7',
    });
    assert.equal(blocked.status, 403, JSON.stringify(blocked.body));
    assert.equal(blocked.body.errorCode, 'GH-65005');
    const elsewhere = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: await app.code() },
      remoteAddress: '203.0.113.5',
    });
    assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body));
  });
});

describe('sign-in statements (audit entries stored with the challenge and the session; the spend in the session start)', () => {
  test('the challenge answer and the verify answers are audited once each, with the user as actor', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'audited@opt.test' });
    const { app } = await enrolled('audited@opt.test');
    const since = new Date().toISOString();
    const r = await login('audited@opt.test');
    assert.equal(r.body.mfaRequired, true);
    const code = await app.code();
    const wrong = await t.call('POST', `${M}/verify`, {
      body: { mfaToken: r.body.mfaToken, value: code === '123456' ? '654321' : '123456' },
    });
    assert.equal(wrong.status, 400);
    const v = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: code } });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const plain = (await user(t, 'mfa-opt', { email: 'audited-plain@opt.test' })).id;
    assert.ok((await login('audited-plain@opt.test')).body.accessToken);
    const a = await t.call('GET', `/audits?from=${encodeURIComponent(since)}&sortDirection=asc&count=1000`, {
      token: vendor,
    });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const mine = a.body.data.filter((e: any) => e.action === 'user.sign_in' || e.action === 'auth.user.mfa.verify');
    assert.deepEqual(
      mine.map((e: any) => [
        e.action,
        e.outcome,
        `${e.actor.type}:${e.actor.id}`,
        e.data.statusCode,
        e.data.mfaRequired ?? null,
      ]),
      [
        ['user.sign_in', 'success', `user:${id}`, 200, true],
        ['auth.user.mfa.verify', 'failure', 'anonymous:null', 400, null],
        ['auth.user.mfa.verify', 'success', `user:${id}`, 201, null],
        ['user.sign_in', 'success', `user:${plain}`, 200, null],
      ],
    );
    assert.equal(mine[0].data.identifier, 'audited@opt.test');
    assert.equal(mine[0].ip, '127.0.0.1');
  });

  test('the same mfaToken and code sent twice at once: one sign-in, the other is 401 and counts nothing', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'twice@opt.test' });
    const { app } = await enrolled('twice@opt.test');
    const r = await login('twice@opt.test');
    const code = await app.code();
    const both = await Promise.all(
      [0, 1].map(() => t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: code } })),
    );
    assert.deepEqual(both.map((v) => v.status).sort(), [201, 401], JSON.stringify(both.map((v) => v.body)));
    assert.equal(both.find((v) => v.status === 401)!.body.errorCode, 'GH-63001');
    const { rows: s } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM sessions WHERE user_id = $1 AND amr @> ARRAY['otp']",
      [id],
    );
    assert.equal(s[0].n, 1, 'one session');
    const { rows: u } = await t.db.query<{ failed_attempts: number }>(
      'SELECT failed_attempts FROM users WHERE id = $1',
      [id],
    );
    assert.equal(u[0].failed_attempts, 0);
  });

  test('codes sent at once against one mfaToken: at most 5 are judged, the rest find it burnt', async () => {
    await account(t, { id: 'mfa-burst' });
    const lp = await t.call('POST', '/identity/resources/configurations/v1/lockout-policy', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'mfa-burst' },
      body: { enabled: false, maxAttempts: 5 },
    });
    assert.equal(lp.status, 201, JSON.stringify(lp.body));
    await user(t, 'mfa-burst', { email: 'burst@burst.test' });
    const { app } = await enrolled('burst@burst.test');
    const r = await login('burst@burst.test');
    const good = await app.code();
    const bad = good === '000000' ? '111111' : '000000';
    const all = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: bad } }),
      ),
    );
    assert.deepEqual(
      all.map((v) => v.status).sort(),
      [400, 400, 400, 400, 400, 401, 401, 401],
      JSON.stringify(all.map((v) => v.body)),
    );
    const after = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(after.status, 401, 'burnt');
  });

  test('a verify refused for another reason than the code does not use up an attempt', async () => {
    await account(t, { id: 'mfa-refund' });
    await user(t, 'mfa-refund', { email: 'refund@refund.test' });
    const { app } = await enrolled('refund@refund.test');
    const r = await login('refund@refund.test');
    for (let i = 0; i < 6; i++) {
      const v = await t.call('POST', `${M}/authenticator/00000000-0000-4000-8000-000000000000/verify`, {
        body: { mfaToken: r.body.mfaToken, value: '123456' },
      });
      assert.equal(v.status, 404, JSON.stringify(v.body));
    }
    const { rows } = await t.db.query<{ failures: number }>('SELECT failures FROM mfa_tokens WHERE token_hash = $1', [
      createHash('sha256').update(r.body.mfaToken).digest('hex'),
    ]);
    assert.deepEqual(
      rows.map((x) => x.failures),
      [0],
    );
    const ok = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('a step spent by another sign-in after the verify read the device is refused as reused, counted, and rolls the session back', async () => {
    const { id } = await user(t, 'mfa-opt', { email: 'race@opt.test' });
    const { app, deviceId } = await enrolled('race@opt.test');
    const r = await login('race@opt.test');
    assert.equal(r.body.mfaRequired, true);
    const code = await app.code();
    const { rows: before } = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
      [id],
    );
    // A concurrent sign-in spends the same step: its change is held uncommitted while this verify runs (on PostgreSQL
    // the verify reads the old step and its spend waits for the row, then finds it spent; PGlite serialises both).
    let verify: Promise<any> | undefined;
    // The request is started in this test's async context, not the transaction's (bound outside it).
    const send = AsyncResource.bind(() =>
      t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: code } }),
    );
    await t.db.transaction(async (tx) => {
      await tx.query('UPDATE mfa_devices SET last_step = $2 WHERE id = $1', [deviceId, app.used]);
      verify = send();
      await sleep(300);
    });
    const v = await verify!;
    assert.equal(v.status, 400, JSON.stringify(v.body));
    assert.equal(v.body.errorCode, 'GH-63003');
    const { rows: after } = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
      [id],
    );
    assert.equal(after[0].n, before[0].n, 'no session started');
    const { rows: u } = await t.db.query<{ failed_attempts: number }>(
      'SELECT failed_attempts FROM users WHERE id = $1',
      [id],
    );
    assert.equal(u[0].failed_attempts, 1, 'the reused code counts toward lockout');
    const { rows: tok } = await t.db.query<{ failures: number }>('SELECT failures FROM mfa_tokens WHERE user_id = $1', [
      id,
    ]);
    assert.deepEqual(
      tok.map((x) => x.failures),
      [1],
      'the mfaToken stays, with one failure',
    );
    const ok = await t.call('POST', `${M}/verify`, { body: { mfaToken: r.body.mfaToken, value: await app.code() } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const { rows: done } = await t.db.query<{ failed_attempts: number }>(
      'SELECT failed_attempts FROM users WHERE id = $1',
      [id],
    );
    assert.equal(done[0].failed_attempts, 0);
  });
});
