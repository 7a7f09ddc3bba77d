import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { csrfField } from '../../http/pages/kit.ts';
import { field, notice } from '../../http/pages/layout.ts';
import { t, type TextKey } from '../../http/pages/text.ts';

/** What the login page offers: the environment's public login-box configuration. */
export interface Methods {
  password: boolean;
  magicLink: boolean;
  emailCode: boolean;
  smsCode: boolean;
  sso: boolean;
  socialProviders: string[];
  allowSignups: boolean;
  /** The captcha policy is on: these pages cannot show its widget (the CSP allows no third-party script). */
  captcha: boolean;
}

export interface LoginState {
  email?: string;
  returnTo: string;
  error?: string;
  info?: string;
}

const providerName = (type: string) => type.charAt(0).toUpperCase() + type.slice(1);

/** The email field of a sign-in form (`id` differs per form: a page may have several). */
const emailField = (L: string, value: string | undefined, id: string, autofocus = false) =>
  field({
    name: 'email',
    id,
    label: t(L, 'signin.email'),
    type: 'email',
    value,
    autocomplete: 'username',
    required: true,
    autofocus,
  });

const codeField = (L: string) =>
  field({
    name: 'code',
    label: t(L, 'code.code'),
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    required: true,
    autofocus: true,
  });

const currentPassword = (L: string, autofocus: boolean) =>
  field({
    name: 'password',
    label: t(L, 'signin.password'),
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    autofocus,
  });

/** A field for a new password (the password managers' `new-password`). */
export const newPassword = (L: string, label: TextKey, autofocus = true) =>
  field({
    name: 'password',
    label: t(L, label),
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    autofocus,
  });

/** The hidden returnTo of a form (kept across every step of a sign-in). */
export const returnField = (returnTo: string) => html`<input type="hidden" name="returnTo" value="${returnTo}">`;

/**
 * The sign-in page: the password form first, then each other method the environment enables, each its own form;
 * `extra` (a passkey button) last.
 */
export function loginBody(reply: FastifyReply, m: Methods, s: LoginState, extra?: SafeHtml): SafeHtml {
  const L = reply.request.locale;
  const csrf = csrfField(reply);
  const hidden = html`${csrf}${returnField(s.returnTo)}`;
  const forms: SafeHtml[] = [];
  if (m.password) {
    forms.push(html`<form method="post" action="/account/login">${hidden}
${emailField(L, s.email, 'f-email', !s.email)}
${currentPassword(L, Boolean(s.email))}
<p><button type="submit">${t(L, 'signin.submit')}</button></p></form>
<p class="links"><a href="/account/forgot-password">${t(L, 'signin.forgot')}</a></p>`);
  }
  const emailOnly = (action: string, label: string, id: string) =>
    html`<form method="post" action="${action}">${hidden}
${emailField(L, s.email, id)}
<p><button type="submit" class="secondary">${label}</button></p></form>`;
  if (m.magicLink) forms.push(emailOnly('/account/login/magic-link', t(L, 'magic.request'), 'f-magic-email'));
  if (m.emailCode) forms.push(emailOnly('/account/login/code', t(L, 'code.request'), 'f-code-email'));
  if (m.smsCode) {
    forms.push(html`<form method="post" action="/account/login/sms">${hidden}
${field({ name: 'phoneNumber', label: t(L, 'code.phone'), type: 'tel', autocomplete: 'tel', required: true })}
<p><button type="submit" class="secondary">${t(L, 'code.sms.request')}</button></p></form>`);
  }
  if (m.sso) forms.push(emailOnly('/account/login/sso', t(L, 'sso.submit'), 'f-sso-email'));
  if (m.socialProviders.length) {
    forms.push(
      html`<div>${m.socialProviders.map(
        (p) => html`<form method="post" action="/account/login/social/${p}">${hidden}
<p><button type="submit" class="secondary">${t(L, 'social.with', { provider: providerName(p) })}</button></p></form>`,
      )}</div>`,
    );
  }
  if (extra) forms.push(extra);
  const sep = html`<p class="divider">${t(L, 'signin.or')}</p>`;
  return html`${s.error ? notice('error', s.error) : ''}${s.info ? notice('info', s.info) : ''}
${m.captcha && !s.error ? notice('info', t(L, 'signin.captcha')) : ''}
${forms.length ? forms.map((f, i) => (i ? html`${sep}${f}` : f)) : notice('info', t(L, 'signin.noMethods'))}
${m.allowSignups ? html`<p class="links"><a href="/account/signup">${t(L, 'signin.signup')}</a></p>` : ''}`;
}

/** The code step of email or SMS code sign-in: the identifier rides along hidden. */
export function codeBody(
  reply: FastifyReply,
  s: { action: string; identifier: { name: string; value: string }; returnTo: string; error?: string },
): SafeHtml {
  const L = reply.request.locale;
  return html`${s.error ? notice('error', s.error) : notice('info', t(L, 'code.sent'))}
<form method="post" action="${s.action}">${csrfField(reply)}${returnField(s.returnTo)}
<input type="hidden" name="${s.identifier.name}" value="${s.identifier.value}">
${codeField(L)}
<p><button type="submit">${t(L, 'signin.submit')}</button></p></form>
<p class="links"><a href="/account/login">${t(L, 'back.signin')}</a></p>`;
}
