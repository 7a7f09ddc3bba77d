import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './harness.ts';

export type ListeningApp = TestApp & { origin: string };

/**
 * The test app on a real socket (127.0.0.1, a free port), for clients that speak HTTP themselves (the vendor's
 * published libraries). `close()` stops the listener with the rest of the app.
 */
export async function startListeningApp(...args: Parameters<typeof startTestApp>): Promise<ListeningApp> {
  const t = await startTestApp(...args);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return { ...t, origin: `http://127.0.0.1:${port}` };
}

/**
 * What a browser gives the browser SDK: `fetch` that keeps the server's cookies (a jar per origin, Path and
 * expiry honoured loosely: every cookie goes back to the one test server) and a `window.location`.
 */
export function installBrowser(origin: string): { jar: Map<string, string> } {
  const jar = new Map<string, string>();
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await realFetch(input, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v = ''] = a.trim().split('=');
        if (k.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k.toLowerCase() === 'expires') return Date.parse(v) <= Date.now();
        return false;
      });
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
  (globalThis as { window?: unknown }).window = { location: { search: '', href: `${origin}/` } };
  return { jar };
}
