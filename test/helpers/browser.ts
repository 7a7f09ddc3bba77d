import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from './harness.ts';

/** Debian's chromium (installed by .ci/run); CHROMIUM_PATH overrides it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether browser tests can run here. In CI the browser is installed, so its absence fails the run; on a developer
 * machine without it the browser tests are skipped with this reason (pass it as `{ skip }` to `describe`).
 */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI) throw new Error(`Browser tests need chromium at ${CHROMIUM} (apt-get install chromium)`);
  return `chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

// Flags for a closed network and a root user: no sandbox, no background calls to Google's hosts.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/** A port free now on 127.0.0.1 (another local server of a test, e.g. a relying party, listens on it). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export type BrowserApp = TestApp & { origin: string };

/**
 * The app on a real port with PUBLIC_URL = http://localhost:<port>, the origin the browser sees: email links, the
 * OpenID issuer and the WebAuthn relying party all name it (localhost is a secure context, an IP is no rpID).
 */
export async function startBrowserApp(
  env: Record<string, string> = {},
  opts: Parameters<typeof startTestApp>[1] = {},
): Promise<BrowserApp> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const t = await startTestApp({ PUBLIC_URL: origin, ...env }, opts);
  await t.app.listen({ port, host: '127.0.0.1' });
  return { ...t, origin };
}

/** A fresh browser context (own cookies) with a page; the context is closed by the caller or with the browser. */
export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  return { context, page };
}

/** Saves a screenshot of a hosted page under test-results/screenshots (not committed; docs/ keeps chosen ones). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = 'test-results/screenshots';
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}
