import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { BenchApp } from './lib.ts';

/**
 * A browser without a browser, for the front door bench: one keep-alive connection, a cookie jar (names and values;
 * paths and expiry ignored but for deletion), redirects followed by hand while they stay on the server. A fresh
 * Browser has no cookies: a new visitor.
 */

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Bytes on the wire (the body as sent, compressed or not). */
  bytes: number;
  ms: number;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly url: URL;

  constructor(
    baseUrl: string,
    /** The origin the server names in absolute redirects (PUBLIC_URL): same server. */
    private readonly publicOrigin: string = baseUrl,
  ) {
    this.url = new URL(baseUrl);
  }

  request(
    method: string,
    path: string,
    opts: { body?: string; headers?: Record<string, string>; jar?: boolean } = {},
  ): Promise<Answer> {
    const headers: Record<string, string | number> = { ...(opts.headers ?? {}) };
    if (opts.jar !== false && this.cookies.size)
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const payload = opts.body === undefined ? undefined : Buffer.from(opts.body);
    if (payload) headers['content-length'] = payload.length;
    return new Promise((resolve, reject) => {
      const start = performance.now();
      const req = http.request(
        { host: this.url.hostname, port: this.url.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (opts.jar !== false) this.take(res.headers['set-cookie'] ?? []);
            const raw = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: raw.toString('utf8'),
              bytes: raw.length,
              ms: performance.now() - start,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  private take(lines: string[]) {
    for (const line of lines) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (!value || /max-age=0\b/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** Path and query of a Location on this server, else undefined (a client's redirect URI). */
  private local(location: string, from: string): string | undefined {
    const u = new URL(location, new URL(from, this.publicOrigin));
    if (u.origin !== this.publicOrigin && u.origin !== this.url.origin) return undefined;
    return u.pathname + u.search;
  }

  /**
   * Follows redirects with GET from `path` (after `first`, when given, as the first answer) until a page or a
   * redirect off the server. Answers the page (and its path) or the URL left for, and the requests made.
   */
  async follow(path: string, opts: { first?: Answer } = {}) {
    let current = path;
    let answer = opts.first;
    let requests = 0;
    for (let hops = 0; hops < 20; hops++) {
      if (!answer) {
        answer = await this.request('GET', current, { headers: { accept: 'text/html' } });
        requests++;
      }
      const location = answer.headers.location;
      if (answer.status < 300 || answer.status >= 400 || !location) return { page: answer, path: current, requests };
      const next = this.local(location, current);
      if (next === undefined) return { left: new URL(location, this.publicOrigin), requests };
      current = next;
      answer = undefined;
    }
    throw new Error(`too many redirects from ${path}`);
  }

  close() {
    this.agent.destroy();
  }
}

/** A confidential client (type web, first party: no consent page) and its secret. */
export async function confidentialClient(app: BenchApp, redirectUri: string) {
  const APPS = '/applications/resources/applications/v1';
  const r = await app.client.request('POST', APPS, {
    body: { name: 'front door bench', type: 'web', redirectUris: [redirectUri], isFirstParty: true },
  });
  if (r.status !== 201) throw new Error(`application: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  const c = await app.client.request('POST', `${APPS}/credentials/regenerate`, { body: { appId: r.body.id } });
  if (c.status !== 201) throw new Error(`credentials: HTTP ${c.status} ${JSON.stringify(c.body).slice(0, 300)}`);
  const id = r.body.id as string;
  const secret = c.body.clientSecret as string;
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  return { id, secret, redirectUri, basic };
}
export type Client = Awaited<ReturnType<typeof confidentialClient>>;

const b64url = (b: Buffer) => b.toString('base64url');

/** An authorization request with PKCE (S256), state and nonce, as a relying party builds it. */
export function authorizeRequest(client: Client) {
  const verifier = b64url(randomBytes(32));
  const q = new URLSearchParams({
    client_id: client.id,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state: b64url(randomBytes(16)),
    nonce: b64url(randomBytes(16)),
    code_challenge: b64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
  });
  return { path: `/oidc/auth?${q}`, verifier };
}

const HTML_FORM = {
  'content-type': 'application/x-www-form-urlencoded',
  'sec-fetch-site': 'same-origin',
  accept: 'text/html',
};

/** The code of a redirect to the client, or an error naming where the flow ended. */
function codeOf(end: { left?: URL; page?: Answer; path?: string }, client: Client): string {
  const code = end.left?.href.startsWith(client.redirectUri) ? end.left.searchParams.get('code') : null;
  if (!code)
    throw new Error(
      `no code: ${end.left?.href ?? `${end.page?.status} at ${end.path}: ${end.page?.body.slice(0, 300)}`}`,
    );
  return code;
}

/**
 * The front channel of a new visitor: authorize → interaction → sign-in page (its CSRF token) → the form posted →
 * back through the interaction to the client's redirect URI. Answers the code, its verifier and the requests made.
 */
export async function frontChannel(b: Browser, client: Client, email: string, password: string) {
  const req = authorizeRequest(client);
  const toLogin = await b.follow(req.path);
  const page = toLogin.page;
  if (!page || page.status !== 200 || !toLogin.path?.startsWith('/account/login'))
    throw new Error(`expected the sign-in page, got ${page?.status} at ${toLogin.path}: ${page?.body.slice(0, 200)}`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  const returnTo = new URL(toLogin.path, 'http://x').searchParams.get('returnTo');
  if (!csrf || !returnTo) throw new Error(`sign-in page without _csrf or returnTo: ${toLogin.path}`);
  const form = new URLSearchParams({ _csrf: csrf, email, password, returnTo }).toString();
  const posted = await b.request('POST', '/account/login', { body: form, headers: HTML_FORM });
  if (posted.status !== 303) throw new Error(`sign-in form: HTTP ${posted.status} ${posted.body.slice(0, 300)}`);
  const back = await b.follow('/account/login', { first: posted });
  return { code: codeOf(back, client), verifier: req.verifier, requests: toLogin.requests + 1 + back.requests };
}

/** An authorization request of a browser already signed in (session cookies): straight to a code. */
export async function signedInCode(b: Browser, client: Client) {
  const req = authorizeRequest(client);
  const end = await b.follow(req.path);
  return { code: codeOf(end, client), verifier: req.verifier };
}

/** The token request body of a code (client_secret_basic goes in the Authorization header). */
export const exchangeBody = (client: Client, code: string, verifier: string) =>
  new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirectUri,
    code_verifier: verifier,
  }).toString();

/** The back channel: the code exchanged at /oauth/token (client_secret_basic, PKCE). */
export async function exchange(b: Browser, client: Client, code: string, verifier: string) {
  const r = await b.request('POST', '/oauth/token', {
    body: exchangeBody(client, code, verifier),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: client.basic,
      accept: 'application/json',
    },
    jar: false,
  });
  if (r.status !== 200) throw new Error(`token: HTTP ${r.status} ${r.body.slice(0, 300)}`);
  const body = JSON.parse(r.body);
  if (!body.id_token || !body.access_token) throw new Error(`token: no tokens in ${r.body.slice(0, 300)}`);
  return body as { id_token: string; access_token: string };
}
