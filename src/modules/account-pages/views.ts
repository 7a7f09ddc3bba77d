import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { csrfField } from '../../http/pages/kit.ts';
import { field } from '../../http/pages/layout.ts';
import { t } from '../../http/pages/text.ts';
import { qrDataUrl } from '../mfa/index.ts';

/** A form posting to `action` with the CSRF field; `secondary` for the less likely choice of a page. */
export function form(
  reply: FastifyReply,
  action: string,
  body: SafeHtml | SafeHtml[],
  submit: string,
  o: { secondary?: boolean; label?: string } = {},
): SafeHtml {
  return html`<form method="post" action="${action}">${csrfField(reply)}${body}<button type="submit"${o.secondary ? html` class="secondary"` : ''}${o.label ? html` aria-label="${o.label}"` : ''}>${submit}</button></form>`;
}

export const hidden = (name: string, value: string | undefined): SafeHtml =>
  value === undefined ? html`` : html`<input type="hidden" name="${name}" value="${value}">`;

/** A labelled checkbox (the box first, then its label, as people expect). */
export const checkbox = (name: string, label: string): SafeHtml =>
  html`<p class="field check"><input id="f-${name}" name="${name}" type="checkbox" value="1"><label for="f-${name}">${label}</label></p>`;

/** The field of a one-time code: numeric keyboard and the browser's one-time-code autofill. */
export const codeField = (locale: string, label = t(locale, 'mfa.code')): SafeHtml =>
  field({
    name: 'code',
    label,
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    required: true,
    autofocus: true,
  });

/** The setup key of an otpauth URI (base32), shown as text for apps that cannot scan. */
export const secretOf = (uri: string): string => new URL(uri).searchParams.get('secret') ?? '';

/** An otpauth URI we made: carried by the enrolment form so a wrong code re-renders the same QR code. */
export const isOtpauth = (uri: string | undefined): uri is string =>
  typeof uri === 'string' && uri.length <= 1024 && /^otpauth:\/\/totp\/[^\s]*\?[^\s]*secret=[A-Z2-7]+/.test(uri);

/** The QR code (a PNG data: URL, allowed by the pages' CSP) and the same secret as text, then the code form. */
export async function enrolment(
  reply: FastifyReply,
  o: { action: string; uri: string; remember?: boolean; error?: SafeHtml; hiddens?: SafeHtml },
): Promise<SafeHtml> {
  const l = reply.request.locale;
  const qr = await qrDataUrl(o.uri);
  return html`${o.error}<p>${t(l, 'mfa.enrol.intro')}</p>
<img class="qr" src="${qr}" alt="${t(l, 'mfa.enrol.qr')}" width="192" height="192">
<p class="field"><span class="label" id="secret-label">${t(l, 'mfa.enrol.secret')}</span>
<code class="secret" aria-labelledby="secret-label" data-secret="${secretOf(o.uri)}">${secretOf(o.uri)}</code></p>
<p>${t(l, 'mfa.enrol.code')}</p>
${form(reply, o.action, [hidden('uri', o.uri), o.hiddens ?? html``, codeField(l), o.remember ? checkbox('rememberDevice', t(l, 'mfa.remember')) : html``], t(l, 'mfa.verify'))}`;
}

/** The recovery codes, shown once after an enrolment, and where to go on. */
export function recoveryCodes(locale: string, codes: string[], next: string): SafeHtml {
  return html`<p>${t(locale, 'mfa.codes.intro')}</p>
<ul class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a class="button" href="${next}">${t(locale, 'mfa.codes.continue')}</a></p>`;
}
