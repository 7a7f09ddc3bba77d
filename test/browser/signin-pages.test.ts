import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { account, PASSWORD, user } from '../fixtures/builders.ts';
import {
  type BrowserApp,
  browserSkip,
  launchBrowser,
  newPage,
  screenshot,
  startBrowserApp,
} from '../helpers/browser.ts';
import { linkIn, type Mail, type Mailbox, startMailbox } from '../helpers/mailbox.ts';

const skip = browserSkip();
const ACC = 'bsp-acme';
let t: BrowserApp;
let browser: Browser;
let mailbox: Mailbox;

/** The newest mail to `email` whose subject matches. */
async function mailTo(email: string, subject: RegExp): Promise<Mail> {
  return mailbox.waitFor((m) => m.to.includes(email) && subject.test(m.subject));
}
/** The browser session cookie of a context, if any. */
const session = async (c: BrowserContext) => (await c.cookies()).find((k) => k.name === 'gh_refresh');

async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('hosted sign-in pages in a browser', { skip }, () => {
  before(async () => {
    t = await startBrowserApp({ CODE_RATE_LIMIT_PER_IP: '1000' });
    mailbox = await startMailbox();
    await mailbox.configure(t);
    await account(t, { id: ACC, name: 'Acme' });
    const vendor = await t.vendorToken();
    await t.call('POST', '/identity/resources/configurations/v1', { token: vendor, body: { allowSignups: true } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await mailbox?.close();
  });

  test('sign in with a password and land on returnTo (signed in there)', async () => {
    const u = await user(t, ACC, { email: 'ada@bsp.test' });
    const { context, page } = await newPage(browser);
    await page.goto(`${t.origin}/account/login?returnTo=${encodeURIComponent('/account/logout')}`);
    await screenshot(page, 'sign-in');
    await signIn(page, u.email, 'not the password');
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /email or password is not right/);
    await screenshot(page, 'sign-in-failed');
    await signIn(page, u.email, PASSWORD);
    await page.waitForURL(`${t.origin}/account/logout`);
    assert.match(await page.locator('main').innerText(), /signed in as ada@bsp\.test/);
    await screenshot(page, 'sign-out');
    const cookie = await session(context);
    assert.ok(cookie?.httpOnly, 'gh_refresh is HttpOnly');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.origin}/account/login`);
    assert.equal(await session(context), undefined, 'signed out');
    await context.close();
  });

  test('forgot password: the emailed link sets a new password, which then signs in', async () => {
    const u = await user(t, ACC, { email: 'bob@bsp.test' });
    const { context, page } = await newPage(browser);
    await page.goto(`${t.origin}/account/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await screenshot(page, 'forgot-password');
    await page.getByLabel('Email').fill(u.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').waitFor();
    const link = linkIn(await mailTo(u.email, /Reset your password/));
    assert.equal(link.origin, t.origin);
    await page.goto(link.href);
    await screenshot(page, 'reset-password');
    await page.getByLabel('New password').fill('Brand-New-Secret-77');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').waitFor();
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await signIn(page, u.email, 'Brand-New-Secret-77');
    await page.waitForURL((url) => url.pathname === '/account/me');
    assert.ok(await session(context));
    await context.close();
  });

  test('sign-up, then the activation link from the mail signs the new user in', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(`${t.origin}/account/login`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await screenshot(page, 'sign-up');
    await page.getByLabel('Full name').fill('Cy Newman');
    await page.getByLabel('Email').fill('cy@bsp.test');
    await page.getByLabel('Company name').fill('Cy Co');
    await page.getByLabel('Password').fill('Signup-Secret-2024');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').waitFor();
    const link = linkIn(await mailTo('cy@bsp.test', /Activate your account/));
    await page.goto(`${link.href}&returnTo=${encodeURIComponent('/account/logout')}`);
    await screenshot(page, 'activate');
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.waitForURL(`${t.origin}/account/logout`);
    assert.match(await page.locator('main').innerText(), /signed in as cy@bsp\.test/);
    await context.close();
  });

  test('a form another site posts to /account/login is refused; nothing is signed in', async () => {
    const u = await user(t, ACC, { email: 'dee@bsp.test' });
    // The other site: 127.0.0.1 on another port is another site than localhost, as a browser judges it.
    const evil: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><form id="f" method="post" action="${t.origin}/account/login">
<input name="email" value="${u.email}"><input name="password" value="${PASSWORD}"></form>
<script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const { context, page } = await newPage(browser);
      const answered = page.waitForResponse((r) => r.url() === `${t.origin}/account/login`);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const r = await answered;
      assert.equal(r.status(), 403);
      assert.equal((await r.request().allHeaders())['sec-fetch-site'], 'cross-site');
      assert.equal(await session(context), undefined, 'no session cookie');
      await page.goto(`${t.origin}/account/login`);
      assert.equal(new URL(page.url()).pathname, '/account/login', 'the login form again: not signed in');
      await context.close();
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });
});
