import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Browser } from './frontdoor-flow.ts';
import { stats } from './lib.ts';

/**
 * 3. The hosted sign-in page as a new visitor's browser loads it: the HTML and what it links (stylesheets, scripts),
 * asked for with Accept-Encoding as a browser sends it; bytes on the wire, and what gzip and brotli would make of the
 * bodies when the server sends them uncompressed. Then GET /account/login latency, sequential on one connection.
 */

const ACCEPT = { accept: 'text/html', 'accept-encoding': 'gzip, deflate, br' };

export interface Resource {
  path: string;
  type: string;
  /** Bytes on the wire (the body as sent) and the encoding the server chose. */
  wire: number;
  encoding: string;
  raw: number;
  gzip: number;
  brotli: number;
}

function resourceOf(path: string, a: { headers: Record<string, unknown>; bytes: number; body: string }): Resource {
  const encoding = String(a.headers['content-encoding'] ?? 'identity');
  const body = Buffer.from(a.body);
  return {
    path,
    type: String(a.headers['content-type'] ?? '').split(';')[0],
    wire: a.bytes,
    encoding,
    // The decoded size is only known when the server did not compress (this client does not decode).
    raw: encoding === 'identity' ? body.length : NaN,
    gzip: encoding === 'identity' ? gzipSync(body, { level: 6 }).length : NaN,
    brotli:
      encoding === 'identity'
        ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }).length
        : NaN,
  };
}

export async function measurePage(baseUrl: string, publicOrigin: string, opts: { n: number; budgetMs: number }) {
  const b = new Browser(baseUrl, publicOrigin);
  const page = await b.request('GET', '/account/login', { headers: ACCEPT, jar: false });
  if (page.status !== 200) throw new Error(`sign-in page: HTTP ${page.status}`);
  const resources = [resourceOf('/account/login', page)];
  const links = [
    ...page.body.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g),
    ...page.body.matchAll(/<script[^>]+src="([^"]+)"/g),
  ].map((m) => m[1]!.replace(/&amp;/g, '&'));
  for (const href of links) {
    const u = new URL(href, `${publicOrigin}/account/login`);
    if (u.origin !== publicOrigin) continue;
    const a = await b.request('GET', u.pathname + u.search, { headers: { ...ACCEPT, accept: '*/*' }, jar: false });
    if (a.status !== 200) throw new Error(`${href}: HTTP ${a.status}`);
    resources.push(resourceOf(u.pathname, a));
  }
  // Latency: a new visitor each time (no cookies: a fresh CSRF secret and signed cookie per page, as a first visit).
  for (let i = 0; i < 20; i++) await b.request('GET', '/account/login', { headers: ACCEPT, jar: false });
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < opts.n && (samples.length < 200 || performance.now() - start < opts.budgetMs)) {
    const a = await b.request('GET', '/account/login', { headers: ACCEPT, jar: false });
    if (a.status !== 200) throw new Error(`sign-in page: HTTP ${a.status}`);
    samples.push(a.ms);
  }
  b.close();
  const sum = (f: (r: Resource) => number) => resources.reduce((a, r) => a + f(r), 0);
  return {
    resources,
    total: { wire: sum((r) => r.wire), raw: sum((r) => r.raw), gzip: sum((r) => r.gzip), brotli: sum((r) => r.brotli) },
    compressed: resources.some((r) => r.encoding !== 'identity'),
    latency: stats(samples),
    samples,
  };
}
