import type { ProviderContext } from './provider-types.ts';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { type Brand, layout, notice } from '../../http/pages/layout.ts';
import { pickLocale, t, type TextKey } from '../../http/pages/text.ts';

/**
 * The provider's own pages (error, logout question, signed out), rendered on its Koa context with the hosted pages'
 * layout: no inline script or style, so they carry the same CSP as the page kit's.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

function localeOf(ctx: ProviderContext): string {
  const q = ctx.oidc?.params?.ui_locales;
  return pickLocale(typeof q === 'string' ? q : ctx.get('accept-language'));
}

function send(ctx: ProviderContext, brand: Brand, title: TextKey, body: SafeHtml) {
  ctx.type = 'html';
  ctx.set('content-security-policy', PAGE_CSP);
  ctx.set('x-frame-options', 'DENY');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('cache-control', 'no-store');
  ctx.body = layout({ locale: localeOf(ctx), brand, title, body });
}

const clientName = (ctx: ProviderContext): string => ctx.oidc?.client?.clientName || ctx.oidc?.client?.clientId || '';

/** renderError: the error and its description, no redirect (the redirect URI could not be trusted). */
export function errorPage(brand: Brand) {
  return async (ctx: ProviderContext, out: { error: string; error_description?: string }) => {
    const locale = localeOf(ctx);
    send(
      ctx,
      brand,
      'oidc.error.title',
      html`${notice('error', out.error_description ?? out.error)}<p>${t(locale, 'oidc.error.code', { code: out.error })}</p>`,
    );
  };
}

/** logoutSource: asks before signing out; the form posts the provider's xsrf secret to its confirm endpoint. */
export function logoutPage(brand: Brand) {
  return async (ctx: ProviderContext) => {
    const locale = localeOf(ctx);
    const action = ctx.oidc.urlFor('end_session_confirm');
    const secret = String(ctx.oidc.session?.state?.secret ?? '');
    send(
      ctx,
      brand,
      'logout.title',
      html`<p>${t(locale, 'oidc.logout.question', { app: clientName(ctx) || brand.name })}</p>
<form method="post" action="${action}">
<input type="hidden" name="xsrf" value="${secret}">
<button type="submit" name="logout" value="yes" autofocus>${t(locale, 'logout.confirm')}</button>
<button type="submit" class="secondary">${t(locale, 'oidc.logout.stay')}</button>
</form>`,
    );
  };
}

/** postLogoutSuccessSource: shown when the client named no post_logout_redirect_uri. */
export function loggedOutPage(brand: Brand) {
  return async (ctx: ProviderContext) => {
    send(ctx, brand, 'oidc.logout.done.title', html`${notice('info', t(localeOf(ctx), 'oidc.logout.done'))}`);
  };
}

/** The consent page body: what the application asks for, allow or deny. */
export function consentBody(locale: string, a: { app: string; scopes: string[]; csrf: SafeHtml; action: string }) {
  const known = SCOPES.filter((s) => a.scopes.includes(s));
  return html`<p>${t(locale, 'oidc.consent.intro', { app: a.app })}</p>
<ul>${known.map((s) => html`<li>${t(locale, `oidc.scope.${s}`, { app: a.app })}</li>`)}</ul>
<form method="post" action="${a.action}">${a.csrf}
<button type="submit" name="decision" value="allow">${t(locale, 'consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t(locale, 'consent.deny')}</button>
</form>`;
}

/** The account picker body: one button per account of the user. */
export function pickerBody(
  locale: string,
  a: { app: string; accounts: { id: string; name: string }[]; csrf: SafeHtml; action: string },
) {
  return html`<p>${t(locale, 'oidc.picker.intro', { app: a.app })}</p>
<form method="post" action="${a.action}">${a.csrf}
${a.accounts.map((acc) => html`<p><button type="submit" name="tenantId" value="${acc.id}">${acc.name}</button></p>`)}
</form>`;
}
