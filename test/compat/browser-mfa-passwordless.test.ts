import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { totpCode } from '../../src/modules/mfa/totp.ts';
import { codeIn, linkIn, startMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { PASSWORD, rejectsWith, startBrowserSdk } from '../helpers/sdk.ts';

// MFA (authenticator app) and passwordless sign-in through the browser SDK's auth functions.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
let mailbox: Mailbox;
let secret: string;
let lastStep = -Infinity;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next unused authenticator code (the server takes each step once); never in the last second of a step. */
async function code(): Promise<string> {
  while (Date.now() % 30_000 > 29_000) await sleep(100);
  const now = Math.floor(Date.now() / 30_000);
  const step = Math.max(now - 1, lastStep + 1);
  assert.ok(step <= now + 1, 'too many codes in one step');
  lastStep = step;
  return totpCode(secret, step);
}

before(async () => {
  s = await startBrowserSdk({ CODE_RATE_LIMIT_PER_IP: '1000' });
  mailbox = await startMailbox();
  await mailbox.configure(s.t);
  await s.account('x-acme', 'Acme');
  await s.user('x-acme', 'mfa@acme.test');
  await s.user('x-acme', 'pl@acme.test');
  const on = await s.t.call('POST', '/identity/resources/configurations/v1/auth/strategies', {
    token: s.vendor,
    body: { MagicLink: { active: true }, Code: { active: true } },
  });
  assert.equal(on.status, 200, JSON.stringify(on.body));
});
after(async () => {
  await s?.t.close();
  await mailbox?.close();
});

describe('MFA through the browser SDK', () => {
  test('preEnrollMFAAuthenticatorApp, enrollMFAAuthenticatorApp, getMFADevices', async () => {
    await s.signIn('mfa@acme.test');
    const pre = await s.sdk.api.auth.preEnrollMFAAuthenticatorApp();
    assert.match(pre.qrCode, /^data:image\/png;base64,/);
    // The QR code holds the otpauth URI; the test reads it from the answer's `uri` instead of scanning the image.
    secret = new URL((pre as unknown as { uri: string }).uri).searchParams.get('secret')!;
    await s.sdk.api.auth.enrollMFAAuthenticatorApp({ token: await code() });
    const devices = await s.sdk.api.auth.getMFADevices();
    assert.equal(devices.authenticators.length, 1, JSON.stringify(devices));
    await s.sdk.api.auth.logout();
  });

  test('loginv2 asks for the second factor; loginWithMfaV2 finishes the sign-in', async () => {
    const first = await s.sdk.api.auth.loginv2({ email: 'mfa@acme.test', password: PASSWORD });
    assert.equal(first.user.mfaRequired, true);
    const mfaToken = (first.user as unknown as { mfaToken: string }).mfaToken;
    assert.ok(mfaToken);
    assert.equal(first.tenants, undefined, 'no accounts before the second factor');
    const done = await s.sdk.api.auth.loginWithMfaV2({ mfaToken, value: await code() });
    assert.equal(done.user.email, 'mfa@acme.test');
    assert.ok(done.user.accessToken);
    assert.equal(done.activeTenant?.tenantId, 'x-acme');
    await rejectsWith(s.sdk.api.auth.loginWithMfaV2({ mfaToken, value: await code() }), 401);
    await s.sdk.api.auth.logout();
  });
});

describe('passwordless through the browser SDK', () => {
  test('magic link: passwordlessPreLogin emails a link; passwordlessPostLoginV2 with its token signs in', async () => {
    const before = mailbox.to('pl@acme.test').length;
    await s.sdk.api.auth.passwordlessPreLogin({ type: s.sdk.AuthStrategyEnum.MagicLink, email: 'pl@acme.test' });
    const mail = await mailbox.waitFor((m) => mailbox.to('pl@acme.test').indexOf(m) >= before);
    const token = linkIn(mail).searchParams.get('token')!;
    const r = await s.sdk.api.auth.passwordlessPostLoginV2({ type: s.sdk.AuthStrategyEnum.MagicLink, token });
    assert.equal(r.user.email, 'pl@acme.test');
    assert.equal(r.activeTenant?.tenantId, 'x-acme');
    await s.sdk.api.auth.logout();
  });

  test('email code: passwordlessPreLogin emails a code; passwordlessPostLoginV2 with it signs in', async () => {
    const before = mailbox.to('pl@acme.test').length;
    await s.sdk.api.auth.passwordlessPreLogin({ type: s.sdk.AuthStrategyEnum.Code, email: 'pl@acme.test' });
    const mail = await mailbox.waitFor((m) => mailbox.to('pl@acme.test').indexOf(m) >= before);
    // The login box sends the email beside the code (the SDK passes the body through).
    const body = { type: s.sdk.AuthStrategyEnum.Code, token: codeIn(mail), email: 'pl@acme.test' };
    const r = await s.sdk.api.auth.passwordlessPostLoginV2(body);
    assert.equal(r.user.email, 'pl@acme.test');
    assert.deepEqual(
      r.tenants?.map((a) => a.tenantId),
      ['x-acme'],
    );
    await s.sdk.api.auth.logout();
  });
});
