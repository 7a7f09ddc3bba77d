import { readFileSync } from 'node:fs';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { html } from './html.ts';
import { type Brand, layout, notice, type View } from './layout.ts';
import { pickLocale, t } from './text.ts';

export interface PageKitOptions {
  /** Signs the CSRF secret cookie (derived from the key-encryption key: stable across restarts and instances). */
  cookieSecret: string;
  /** PUBLIC_URL is https: every cookie is `Secure`. */
  secureCookies: boolean;
  /** The environment's branding (login box): the page header and brand.css. */
  brand: () => Promise<Brand & { primaryColor?: string; textColor?: string }>;
}

/** Scripts only from our origin, no inline script or style, never framed; forms may post to our origin only. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS: Record<string, { type: string; body: string }> = {};
for (const [name, type] of [['site.css', 'text/css; charset=utf-8']] as const) {
  ASSETS[name] = { type, body: readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8') };
}

/** Adds a script asset (a page module's WebAuthn helper, say) served under /account/assets/<name>. */
export function addScriptAsset(name: string, body: string) {
  ASSETS[name] = { type: 'text/javascript; charset=utf-8', body };
}

const COLOR = /^#[0-9a-fA-F]{3,8}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** The page locale: `ui_locales`, else Accept-Language, else English. */
    locale: string;
  }
  interface FastifyReply {
    /** Renders a page in the request's locale and the environment's branding. */
    page(v: Omit<View, 'locale' | 'brand'>): Promise<FastifyReply>;
  }
}

/**
 * The shell of the hosted pages, registered into an encapsulated scope: form bodies, cookies, CSRF tokens, security
 * headers, HTML error pages and the static assets. A page module registers its routes into the same scope.
 */
export async function installPageKit(scope: FastifyInstance, opts: PageKitOptions) {
  await scope.register(fastifyFormbody);
  await scope.register(fastifyCookie, { secret: opts.cookieSecret });
  await scope.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'gh_csrf',
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure: opts.secureCookies, signed: true },
  });
  scope.decorateRequest('locale', '');
  scope.decorateReply('page', async function (this: FastifyReply, v: Omit<View, 'locale' | 'brand'>) {
    const brand = await opts.brand();
    return this.type('text/html; charset=utf-8').send(layout({ ...v, locale: this.request.locale || 'en', brand }));
  });
  scope.addHook('onRequest', async (req, reply) => {
    const q = req.query as Record<string, unknown> | undefined;
    req.locale = pickLocale(typeof q?.ui_locales === 'string' ? q.ui_locales : req.headers['accept-language']);
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cache-control', 'no-store');
  });
  scope.setErrorHandler(async (err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const appErr = err instanceof AppError ? err : undefined;
    const csrf = typeof err.code === 'string' && err.code.startsWith('FST_CSRF');
    const status = appErr?.status ?? (csrf ? 403 : (err.statusCode ?? 500));
    if (status >= 500) req.log.error({ err }, 'page failed');
    const message = csrf ? t(req.locale, 'form.csrf') : status >= 500 ? t(req.locale, 'page.error.title') : err.message;
    for (const [k, v] of Object.entries(appErr?.headers ?? {})) reply.header(k, v);
    return reply.status(status).page({
      title: 'page.error.title',
      body: html`${notice('error', message)}<p class="links"><a href="/account/login">${t(req.locale, 'page.error.back')}</a></p>`,
    });
  });

  const brand = opts.brand;
  scope.get(
    '/account/assets/brand.css',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (_req, reply) => {
      const b = await brand();
      const vars = [
        b.primaryColor && COLOR.test(b.primaryColor) ? `--brand:${b.primaryColor}` : '',
        b.textColor && COLOR.test(b.textColor) ? `--brand-text:${b.textColor}` : '',
      ].filter(Boolean);
      reply.header('cache-control', 'public, max-age=60');
      return reply.type('text/css; charset=utf-8').send(vars.length ? `:root{${vars.join(';')}}\n` : '\n');
    },
  );
  scope.get<{ Params: { name: string } }>(
    '/account/assets/:name',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (req, reply) => {
      const asset = ASSETS[req.params.name];
      if (!asset) throw new AppError('ROUTE_NOT_FOUND', 'No such asset');
      reply.header('cache-control', 'public, max-age=3600');
      return reply.type(asset.type).send(asset.body);
    },
  );
}

/** The CSRF token of a reply: one per reply, since a browser without gh_csrf yet gets a new secret per call. */
const csrfTokens = new WeakMap<FastifyReply, string>();

/** The hidden CSRF field of a form (the token is bound to the signed gh_csrf cookie). */
export function csrfField(reply: FastifyReply) {
  let token = csrfTokens.get(reply);
  if (token === undefined) {
    token = reply.generateCsrf();
    csrfTokens.set(reply, token);
  }
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/**
 * The check of every form post: a cross-site post is refused by the browser's own Fetch Metadata first, then the
 * CSRF token must match the signed cookie.
 */
export function formGuard(scope: FastifyInstance) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site') throw new AppError('FORM_REJECTED', t(req.locale, 'form.csrf'));
    await new Promise<void>((resolve, reject) =>
      scope.csrfProtection(req, reply, (err?: Error) => (err ? reject(err) : resolve())),
    );
  };
}
