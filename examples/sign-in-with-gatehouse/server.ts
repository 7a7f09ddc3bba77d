import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import * as client from 'openid-client';

/**
 * "Sign in with Gatehouse": a web application that signs its users in with Gatehouse's OpenID Connect code flow
 * (PKCE S256, state, nonce), keeps a session in memory and signs out through Gatehouse (RP-initiated logout).
 */
export interface ExampleOptions {
  /** Gatehouse's public URL (its issuer), e.g. http://localhost:8080. */
  gatehouseUrl: string;
  clientId: string;
  /** The application's client secret; left out, the app is a public client (PKCE only, no secret). */
  clientSecret?: string;
  /** Where browsers reach this app; `${appUrl}/callback` and `${appUrl}/` are its registered redirect URIs. */
  appUrl: string;
}

interface Signed {
  email: string;
  tenantId: string;
  roles: string[];
  idToken: string;
  expires: number;
}

const LOGIN_COOKIE = 'example_login';
const SESSION_COOKIE = 'example_session';
const SESSION_TTL = 8 * 3600;
const PROMPTS = new Set(['login', 'none', 'select_account']);

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function cookies(req: IncomingMessage): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) jar.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return jar;
}

function page(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Example app</title>
<style>body{font:16px system-ui,sans-serif;background:#f4f5f7;margin:0}main{max-width:28rem;margin:4rem auto;
background:#fff;padding:1.5rem 2rem;border-radius:8px;box-shadow:0 1px 3px #0002}dt{font-weight:600}</style></head>
<body><main><h1>Example app</h1>${body}</main></body></html>`);
}

function redirect(res: ServerResponse, to: string, setCookies: string[] = []) {
  res.writeHead(303, { location: to, 'set-cookie': setCookies, 'cache-control': 'no-store' });
  res.end();
}

/** The sign-in in progress from its cookie, or undefined (none, or not one this app wrote). */
function transaction(value: string | undefined): { verifier: string; state: string; nonce: string } | undefined {
  try {
    const tx = value ? JSON.parse(Buffer.from(value, 'base64url').toString()) : undefined;
    return [tx?.verifier, tx?.state, tx?.nonce].every((v) => typeof v === 'string') ? tx : undefined;
  } catch {
    return undefined;
  }
}

/** A JWT's claims, unverified: the access token came straight from Gatehouse's token endpoint over our own call. */
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString());

/** The app's HTTP server (not listening yet); reads Gatehouse's discovery document first. */
export async function createExampleApp(o: ExampleOptions): Promise<Server> {
  const appUrl = o.appUrl.replace(/\/+$/, '');
  const auth = o.clientSecret ? client.ClientSecretBasic(o.clientSecret) : client.None();
  // openid-client refuses http issuers; a Gatehouse on http is a local development one.
  const insecure = new URL(o.gatehouseUrl).protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {};
  const config = await client.discovery(new URL(o.gatehouseUrl), o.clientId, undefined, auth, insecure);
  const sessions = new Map<string, Signed>();
  const secure = appUrl.startsWith('https:') ? '; Secure' : '';
  const cookie = (name: string, value: string, path: string, maxAge: number) =>
    `${name}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;

  function current(req: IncomingMessage): [string, Signed] | undefined {
    const id = cookies(req).get(SESSION_COOKIE);
    const s = id ? sessions.get(id) : undefined;
    if (!id || !s) return undefined;
    if (s.expires > Date.now()) return [id, s];
    sessions.delete(id);
    return undefined;
  }

  async function login(url: URL, res: ServerResponse) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const prompt = url.searchParams.get('prompt');
    const to = client.buildAuthorizationUrl(config, {
      redirect_uri: `${appUrl}/callback`,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(prompt && PROMPTS.has(prompt) ? { prompt } : {}),
    });
    const tx = Buffer.from(JSON.stringify({ verifier, state, nonce })).toString('base64url');
    redirect(res, to.href, [cookie(LOGIN_COOKIE, tx, '/callback', 600)]);
  }

  async function callback(req: IncomingMessage, url: URL, res: ServerResponse) {
    const clear = cookie(LOGIN_COOKIE, '', '/callback', 0);
    const tx = transaction(cookies(req).get(LOGIN_COOKIE));
    if (!tx) return page(res, 400, '<p>No sign-in in progress. <a href="/">Start again</a></p>');
    res.setHeader('set-cookie', clear);
    const { verifier, state, nonce } = tx;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      const e = err as { error?: string; message?: string };
      return page(
        res,
        400,
        `<p role="alert">Sign-in failed: ${esc(e.error ?? e.message ?? 'error')}</p>
<p><a href="/">Back</a></p>`,
      );
    }
    const id = tokens.claims()!;
    const info = await client.fetchUserInfo(config, tokens.access_token, id.sub);
    // The access token is a Gatehouse user token: the account (tenantId) and its roles are its claims.
    const at = claimsOf(tokens.access_token);
    const sid = randomBytes(32).toString('base64url');
    sessions.set(sid, {
      email: String(info.email ?? id.email ?? id.sub),
      tenantId: String(at.tenantId ?? ''),
      roles: Array.isArray(at.roles) ? at.roles.map(String) : [],
      idToken: tokens.id_token!,
      expires: Date.now() + SESSION_TTL * 1000,
    });
    redirect(res, '/', [clear, cookie(SESSION_COOKIE, sid, '/', SESSION_TTL)]);
  }

  function home(req: IncomingMessage, res: ServerResponse) {
    const s = current(req)?.[1];
    if (!s) return page(res, 200, '<p>You are signed out.</p><p><a href="/login">Sign in with Gatehouse</a></p>');
    const roles = esc(s.roles.join(', ') || 'none');
    page(
      res,
      200,
      `<p>Signed in as <strong>${esc(s.email)}</strong></p>
<dl><dt>Account (tenantId)</dt><dd>${esc(s.tenantId)}</dd><dt>Roles</dt><dd>${roles}</dd></dl>
<p><a href="/logout">Sign out</a></p>`,
    );
  }

  function logout(req: IncomingMessage, res: ServerResponse) {
    const found = current(req);
    const clear = cookie(SESSION_COOKIE, '', '/', 0);
    if (!found) return redirect(res, '/', [clear]);
    sessions.delete(found[0]);
    // Gatehouse asks the user, ends its own session too, then comes back to a registered redirect URI.
    const to = client.buildEndSessionUrl(config, {
      id_token_hint: found[1].idToken,
      post_logout_redirect_uri: `${appUrl}/`,
    });
    redirect(res, to.href, [clear]);
  }

  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', appUrl);
    const run = async () => {
      if (req.method !== 'GET') return page(res, 405, '<p>Method not allowed</p>');
      if (url.pathname === '/') return home(req, res);
      if (url.pathname === '/login') return login(url, res);
      if (url.pathname === '/callback') return callback(req, url, res);
      if (url.pathname === '/logout') return logout(req, res);
      page(res, 404, '<p>Not found</p>');
    };
    run().catch((err: unknown) => {
      console.error(err);
      if (!res.headersSent) page(res, 500, '<p>Something went wrong</p>');
      else res.end();
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  if (!env.CLIENT_ID) throw new Error('CLIENT_ID is required (scripts/example-client.ts prints it)');
  const port = Number(env.PORT ?? 3000);
  const server = await createExampleApp({
    gatehouseUrl: env.GATEHOUSE_URL ?? 'http://localhost:8080',
    clientId: env.CLIENT_ID,
    clientSecret: env.CLIENT_SECRET || undefined,
    appUrl: env.APP_URL ?? `http://localhost:${port}`,
  });
  server.listen(port, () => console.log(`Example app on http://localhost:${port}`));
}
