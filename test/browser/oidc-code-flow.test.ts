import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createExampleApp } from '../../examples/sign-in-with-gatehouse/server.ts';
import { registerExampleClient } from '../../scripts/example-client.ts';
import { account, PASSWORD, signedIn, user, type User } from '../fixtures/builders.ts';
import { partsOf } from '../fixtures/oidc-rp.ts';
import {
  type BrowserApp,
  browserSkip,
  freePort,
  launchBrowser,
  newPage,
  screenshot,
  startBrowserApp,
} from '../helpers/browser.ts';
import { VENDOR } from '../helpers/harness.ts';

/**
 * The code flow as a user lives it: the example application (examples/sign-in-with-gatehouse, registered by
 * scripts/example-client.ts) sends Chromium to Gatehouse's authorization endpoint, the hosted sign-in page signs the
 * user in, and the browser comes back to the application, which exchanges the code and shows who signed in.
 */
const skip = browserSkip();
let t: BrowserApp;
let browser: Browser;
let ada: User;
let adaRoles: string[];
let web: { origin: string; clientId: string; server: Server };
let spa: { origin: string; clientId: string; server: Server };

/** The example app registered (confidential, or public without a secret) and listening on a port of its own. */
async function example(publicClient: boolean) {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const reg = await registerExampleClient({
    gatehouseUrl: t.origin,
    vendorClientId: VENDOR.clientId,
    vendorApiKey: VENDOR.secret,
    appUrl: origin,
    publicClient,
  });
  assert.equal(reg.clientSecret === undefined, publicClient);
  const server = await createExampleApp({ gatehouseUrl: t.origin, ...reg, appUrl: origin });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { origin, clientId: reg.clientId, server };
}

/** Every top-level URL the page navigates to, in order (redirects included). */
function visits(page: Page): URL[] {
  const seen: URL[] = [];
  page.on('request', (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) seen.push(new URL(r.url()));
  });
  return seen;
}

const onLogin = (page: Page) => page.waitForURL((u) => u.origin === t.origin && u.pathname === '/account/login');
const text = (page: Page) =>
  page
    .locator('main')
    .textContent()
    .then((s) => s ?? '');
const gatehouseSession = async (c: BrowserContext) => (await c.cookies(t.origin)).find((k) => k.name === 'gh_refresh');

async function signIn(page: Page, who: User) {
  await page.getByLabel('Email', { exact: true }).fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** From the example's home page through the hosted sign-in page and back, signed in. */
async function signInThroughExample(page: Page, app: { origin: string }, shots: string) {
  await page.goto(`${app.origin}/`);
  await screenshot(page, `${shots}-signed-out`);
  await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
  await onLogin(page);
  await screenshot(page, `${shots}-gatehouse-sign-in`);
  await signIn(page, ada);
  await page.waitForURL(`${app.origin}/`);
  await screenshot(page, `${shots}-signed-in`);
}

describe('OpenID Connect code flow through the hosted pages', { skip }, () => {
  before(async () => {
    t = await startBrowserApp({ OIDC_PROVIDER_ENABLED: 'true' });
    const acc = await account(t, { name: 'Acme' });
    ada = await user(t, acc, { email: 'ada@oidc-flow.test', name: 'Ada', verified: true });
    adaRoles = partsOf((await signedIn(t, ada)).accessToken, 1).roles;
    [web, spa] = await Promise.all([example(false), example(true)]);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    for (const s of [web?.server, spa?.server]) if (s) await new Promise((resolve) => s.close(resolve));
    await t?.close();
  });

  describe('one browser through sign-in, SSO, prompt=login and logout (confidential client)', () => {
    let context: BrowserContext;
    let page: Page;
    before(async () => ({ context, page } = await newPage(browser)));
    after(async () => context?.close());

    test('Sign in with Gatehouse lands back on the app showing the email, account and roles', async () => {
      await signInThroughExample(page, web, 'oidc-web');
      const shown = await text(page);
      assert.match(shown, /Signed in as ada@oidc-flow\.test/);
      assert.match(shown, new RegExp(`Account \\(tenantId\\)\\s*${ada.tenantId}`));
      assert.ok(adaRoles.length > 0, 'the user has roles in the account');
      assert.match(shown, new RegExp(`Roles\\s*${adaRoles.join(', ')}`));
      assert.ok((await gatehouseSession(context))?.httpOnly, 'a Gatehouse browser session');
    });

    test('a second authorization reuses the Gatehouse session: straight back with a code, no form', async () => {
      const seen = visits(page);
      await page.goto(`${web.origin}/login`);
      await page.waitForURL(`${web.origin}/`);
      assert.match(await text(page), /Signed in as ada@oidc-flow\.test/);
      const callback = seen.find((u) => u.origin === web.origin && u.pathname === '/callback');
      assert.ok(callback?.searchParams.get('code'), 'the redirect URI got a code');
      assert.ok(seen.some((u) => u.pathname === '/oidc/auth'));
      assert.equal(seen.filter((u) => u.pathname === '/account/login').length, 0, 'no sign-in page');
    });

    test('prompt=login shows the sign-in form again, then comes back', async () => {
      await page.goto(`${web.origin}/login?prompt=login`);
      await onLogin(page);
      await screenshot(page, 'oidc-prompt-login');
      await signIn(page, ada);
      await page.waitForURL(`${web.origin}/`);
      assert.match(await text(page), /Signed in as ada@oidc-flow\.test/);
    });

    test('RP-initiated logout asks, ends the Gatehouse session and returns to the app', async () => {
      await page.getByRole('link', { name: 'Sign out' }).click();
      await page.waitForURL((u) => u.origin === t.origin && u.pathname === '/oauth/logout');
      await screenshot(page, 'oidc-logout-question');
      assert.match(await text(page), /Sign out of Sign in with Gatehouse example\?/);
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(`${web.origin}/`);
      assert.match(await text(page), /You are signed out/);
      assert.equal(await gatehouseSession(context), undefined, 'the Gatehouse session cookie is gone');
      await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
      await onLogin(page);
      assert.ok(await page.getByLabel('Password', { exact: true }).isVisible(), 'the sign-in form again');
    });
  });

  test('public client (PKCE, no secret): the same flow signs in', async () => {
    const { context, page } = await newPage(browser);
    await signInThroughExample(page, spa, 'oidc-public');
    assert.match(await text(page), /Signed in as ada@oidc-flow\.test/);
    await context.close();
  });

  test('prompt=none without a session: error=login_required at the redirect URI', async () => {
    const { context, page } = await newPage(browser);
    const seen = visits(page);
    await page.goto(`${web.origin}/login?prompt=none`);
    await page.waitForURL((u) => u.origin === web.origin && u.pathname === '/callback');
    await screenshot(page, 'oidc-prompt-none');
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('error'), 'login_required');
    assert.equal(callback.searchParams.get('code'), null);
    assert.match(await text(page), /Sign-in failed: login_required/);
    assert.equal(seen.filter((u) => u.pathname === '/account/login').length, 0, 'no sign-in page');
    await context.close();
  });

  test('an unregistered redirect_uri is an HTML 400 page and no redirect', async () => {
    const { context, page } = await newPage(browser);
    const seen = visits(page);
    const evil = 'http://localhost:9/steal';
    const q = new URLSearchParams({
      client_id: web.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: evil,
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const res = await page.goto(`${t.origin}/oidc/auth?${q}`);
    await screenshot(page, 'oidc-bad-redirect-uri');
    assert.equal(res?.status(), 400);
    assert.match(res?.headers()['content-type'] ?? '', /text\/html/);
    assert.equal(new URL(page.url()).pathname, '/oidc/auth', 'the browser stayed on the error page');
    assert.match(await text(page), /redirect_uri/);
    assert.equal(seen.filter((u) => u.origin !== t.origin).length, 0, 'nothing left Gatehouse');
    await context.close();
  });
});
