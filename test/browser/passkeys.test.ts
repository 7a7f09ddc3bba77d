import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import {
  type BrowserApp,
  browserSkip,
  launchBrowser,
  newPage,
  screenshot,
  startBrowserApp,
} from '../helpers/browser.ts';

/**
 * Passkeys in the hosted pages in a real Chromium with a virtual authenticator (the DevTools protocol's WebAuthn
 * domain): registration on /account/me, passkey sign-in on /account/login, then the passkey as the second factor.
 */
const skip = browserSkip();
let t: BrowserApp;
let browser: Browser;
const ACC = 'pk-browser';

async function signInWithPassword(page: Page, email: string) {
  await page.goto(`${t.origin}/account/login`);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
async function signOut(page: Page) {
  await page.goto(`${t.origin}/account/logout`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${t.origin}/account/login`);
}

describe('passkeys in the hosted pages, in a browser', { skip }, () => {
  before(async () => {
    t = await startBrowserApp({ LOGIN_RATE_LIMIT_PER_IP: '100000', LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100' });
    browser = await launchBrowser();
    await account(t, { id: ACC });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('add a passkey on /account/me, sign in with it, then use it as the second factor', async () => {
    const u = await user(t, ACC, { verified: true, name: 'Pat Key' });
    const { context, page } = await newPage(browser);
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    await signInWithPassword(page, u.email);
    await page.waitForURL(`${t.origin}/account/me`);
    const passkeys = page.locator('#passkeys');
    assert.equal(await passkeys.getByText('No passkey is set up.').count(), 1);
    assert.equal(await passkeys.getByText('Passkeys need a browser').isVisible(), false, 'the script hid the note');
    await screenshot(page, 'passkeys-me');
    await passkeys.getByLabel('Label for the new passkey (optional)').fill('Chromium passkey');
    await passkeys.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(/done=passkey-added/);
    assert.equal(await page.getByRole('status').textContent(), 'The passkey was added.');
    assert.match((await passkeys.textContent()) ?? '', /Chromium passkey\s*Added .*, last used never/);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0].isResidentCredential, true, 'a discoverable credential');
    await screenshot(page, 'passkeys-me-added');

    await signOut(page);
    await screenshot(page, 'passkeys-login');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${t.origin}/account/me`);
    assert.ok((await context.cookies()).some((c) => c.name === 'gh_refresh'));
    assert.doesNotMatch((await passkeys.textContent()) ?? '', /last used never/);
    await screenshot(page, 'passkeys-signed-in');

    // The passkey as the second factor: WebAuthn MFA on, MFA forced for the account.
    const vendor = await t.vendorToken();
    const s = await t.call('POST', '/identity/resources/configurations/v1/mfa/strategies', {
      token: vendor,
      body: { strategy: 'WebAuthnPlatform', isActive: true },
    });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    const p = await t.call('PUT', '/identity/resources/configurations/v1/mfa-policy', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': ACC },
      body: { enforceMFAType: 'Force' },
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    await signOut(page);
    await signInWithPassword(page, u.email);
    await page.waitForURL(/\/account\/mfa\?/);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Two-step verification');
    assert.match(
      (await page.locator('main').textContent()) ?? '',
      /Use your passkey or security key \(Chromium passkey\)/,
    );
    await screenshot(page, 'passkeys-mfa');
    await page.getByRole('button', { name: 'Use your security key or passkey' }).click();
    await page.waitForURL(`${t.origin}/account/me`);
    const cookies = await context.cookies();
    assert.ok(cookies.some((c) => c.name === 'gh_refresh'));
    assert.ok(!cookies.some((c) => c.name === 'gh_mfa'), 'the MFA step is over');
    await screenshot(page, 'passkeys-mfa-done');
    assert.deepEqual(cspErrors, []);
    await context.close();
  });
});
