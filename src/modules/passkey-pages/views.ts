import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { csrfField } from '../../http/pages/kit.ts';
import { field } from '../../http/pages/layout.ts';
import { t } from '../../http/pages/text.ts';
import { when } from '../account-pages/index.ts';
import type { WebAuthnDevice } from '../mfa/index.ts';

/** The script asset of these pages (passkeys.js), the only one they need. */
export const SCRIPT = 'passkeys.js';

export const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/**
 * A form the script runs a WebAuthn ceremony for: hidden until the script finds WebAuthn (then the note for browsers
 * without it is hidden instead). The script posts the form's fields to `optionsUrl` and fills in `response`.
 */
export function ceremonyForm(
  reply: FastifyReply,
  o: {
    action: string;
    optionsUrl: string;
    mode: 'create' | 'get';
    fields: SafeHtml[];
    submit: string;
    secondary?: boolean;
  },
): SafeHtml {
  const l = reply.request.locale;
  return html`<form method="post" action="${o.action}" data-passkey="${o.mode}" data-options-url="${o.optionsUrl}" hidden>${csrfField(reply)}
${o.fields}${hidden('response', '')}
<p class="notice error" role="alert" data-passkey-error hidden>${t(l, 'passkey.error.browser')}</p>
<p><button type="submit"${o.secondary ? html` class="secondary"` : ''}>${o.submit}</button></p></form>
<p class="muted" data-passkey-nojs>${t(l, 'passkey.nojs')}</p>`;
}

/** The passkey button of /account/login (discoverable credentials: the authenticator picks the account). */
export const loginButton = (reply: FastifyReply, returnTo: string): SafeHtml =>
  ceremonyForm(reply, {
    action: '/account/login/passkey',
    optionsUrl: '/account/login/passkey/options',
    mode: 'get',
    fields: [hidden('returnTo', returnTo)],
    submit: t(reply.request.locale, 'passkey.signin'),
    secondary: true,
  });

/** The passkey step of /account/mfa for one device (posts action=passkey to the MFA page). */
export function mfaForm(reply: FastifyReply, o: { action: string; device: WebAuthnDevice; remember: SafeHtml }) {
  const l = reply.request.locale;
  const form = ceremonyForm(reply, {
    action: o.action,
    optionsUrl: '/account/mfa/passkey/options',
    mode: 'get',
    fields: [hidden('action', 'passkey'), hidden('deviceId', o.device.id), hidden('webauthnToken', ''), o.remember],
    submit: t(l, 'passkey.mfa.use'),
  });
  return html`<p>${t(l, 'passkey.mfa.intro', { name: o.device.name })}</p>${form}`;
}

export interface PasskeyRow {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The passkeys section of /account/me: the list, and (after a recent sign-in) removal and registration. */
export function meSection(reply: FastifyReply, devices: PasskeyRow[], recent: boolean): SafeHtml {
  const l = reply.request.locale;
  const items = devices.map((d) => {
    const seen = t(l, 'passkey.seen', {
      created: when(l, d.createdAt),
      used: d.lastUsedAt ? when(l, d.lastUsedAt) : t(l, 'passkey.never'),
    });
    const remove = recent
      ? html`<form method="post" action="/account/passkeys/remove">${csrfField(reply)}${hidden('deviceId', d.id)}
<button type="submit" class="secondary" aria-label="${t(l, 'passkey.remove.label', { name: d.name })}">${t(l, 'passkey.remove')}</button></form>`
      : '';
    return html`<li><span>${d.name}<br><span class="muted">${seen}</span></span>${remove}</li>`;
  });
  const list = items.length
    ? html`<ul class="plain passkeys">${items}</ul>`
    : html`<p class="muted">${t(l, 'passkey.none')}</p>`;
  if (!recent) return html`${list}<p><a href="#mfa">${t(l, 'passkey.recent')}</a></p>`;
  const name = field({ name: 'name', id: 'f-passkey-name', label: t(l, 'passkey.name'), autocomplete: 'off' });
  const add = ceremonyForm(reply, {
    action: '/account/passkeys',
    optionsUrl: '/account/passkeys/options',
    mode: 'create',
    fields: [name],
    submit: t(l, 'passkey.add'),
    secondary: true,
  });
  return html`${list}${add}`;
}
