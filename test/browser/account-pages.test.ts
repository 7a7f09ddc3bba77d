import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { Authenticator } from '../helpers/authenticator.ts';
import {
  type BrowserApp,
  browserSkip,
  launchBrowser,
  newPage,
  screenshot,
  startBrowserApp,
} from '../helpers/browser.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

/** The hosted MFA and account pages in a real Chromium: forced enrolment, then the sessions of /account/me. */
const skip = browserSkip();
let t: BrowserApp;
let browser: Browser;
const SIGN_IN = '/identity/resources/auth/v1/user';

describe('hosted MFA and account pages in a browser', { skip }, () => {
  before(async () => {
    t = await startBrowserApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100' });
    browser = await launchBrowser();
    await account(t, { id: 'br-force' });
    const p = await t.call('PUT', '/identity/resources/configurations/v1/mfa-policy', {
      token: await t.vendorToken(),
      headers: { 'gatehouse-tenant-id': 'br-force' },
      body: { enforceMFAType: 'Force' },
    });
    assert.equal(p.status, 200);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('forced TOTP enrolment from the QR page to /account/me, then another session signed out', async () => {
    const u = await user(t, 'br-force', { verified: true, name: 'Grace Browser' });
    const signIn = await t.call('POST', SIGN_IN, { body: { email: u.email, password: PASSWORD } });
    assert.equal(signIn.body.mfaRequired, true, JSON.stringify(signIn.body));
    const { context, page } = await newPage(browser);
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    // As the sign-in page leaves it: the mfaToken in gh_mfa for /account.
    await context.addCookies([
      {
        name: 'gh_mfa',
        value: signIn.body.mfaToken,
        domain: 'localhost',
        path: '/account',
        httpOnly: true,
        sameSite: 'Lax',
      },
    ]);

    await page.goto(`${t.origin}/account/mfa?returnTo=/account/me`);
    await screenshot(page, 'account-mfa-enrol');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Set up an authenticator app');
    const qrWidth = await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.naturalWidth);
    assert.ok(qrWidth > 0, 'the QR code (a data: URL) is shown under the CSP');
    const secret = (await page.locator('code.secret').textContent())?.trim() ?? '';
    assert.match(secret, /^[A-Z2-7]{16,}$/);
    const app = new Authenticator(secret);

    // Keyboard only: the code field has the focus; Enter submits.
    await page.getByLabel('Code').focus();
    await page.keyboard.type(await app.code());
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/account\/mfa/);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Save your recovery codes');
    assert.equal(await page.locator('ul.codes li').count(), 10);
    await screenshot(page, 'account-mfa-recovery-codes');
    await page.getByRole('link', { name: 'I saved them, continue' }).click();
    await page.waitForURL(`${t.origin}/account/me`);
    assert.equal(await page.getByLabel('Name').inputValue(), 'Grace Browser');
    assert.equal(await page.getByText('This device').count(), 1);
    await screenshot(page, 'account-me');

    // A second session (another device, through the API with the app's next code), then signed out from the page.
    const other = await t.call('POST', SIGN_IN, { body: { email: u.email, password: PASSWORD } });
    const v = await t.call('POST', `${SIGN_IN}/mfa/verify`, {
      body: { mfaToken: other.body.mfaToken, value: await app.code() },
      headers: { 'user-agent': 'Other Device/1.0' },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    await page.reload();
    await page.getByRole('button', { name: 'Sign out the session on Other Device/1.0' }).click();
    await page.waitForURL(/done=session/);
    assert.equal(await page.getByRole('status').textContent(), 'The session was signed out.');
    assert.equal(await page.getByText('Other Device/1.0').count(), 0);
    await screenshot(page, 'account-me-session-signed-out');
    const refresh = await t.call('POST', `${SIGN_IN}/token/refresh`, { body: { refreshToken: v.body.refreshToken } });
    assert.equal(refresh.status, 401, 'the other device is signed out');
    assert.deepEqual(cspErrors, []);
    await context.close();
  });
});
