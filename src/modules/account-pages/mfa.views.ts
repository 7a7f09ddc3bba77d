import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { field, notice } from '../../http/pages/layout.ts';
import { t } from '../../http/pages/text.ts';
import type { MfaService } from '../mfa/index.ts';
import type { PasskeyFactor } from './shared.ts';
import { checkbox, codeField, form, hidden } from './views.ts';

export type Challenge = Awaited<ReturnType<MfaService['signin']['challenge']>>;
/** The ways the MFA page verifies: a factor's code, a sent code's step, or a recovery code. */
export type Method = 'totp' | 'sms' | 'email' | 'recovery' | 'passkey';

export interface MfaView {
  challenge: Challenge;
  returnTo: string;
  method: Method;
  deviceId?: string;
  /** A code was sent (otcToken of that send): the page asks for it. */
  sent?: { otcToken: string };
  error?: string;
  /** The passkey form of a device (the WebAuthn pages'); without it no passkey is offered. */
  passkeyForm?: PasskeyFactor['form'];
}

const selfUrl = (returnTo: string, q: Record<string, string> = {}) =>
  `/account/mfa?${new URLSearchParams({ returnTo, ...q }).toString()}`;

/** The method shown first: a passkey, else the authenticator app, else a phone, else email, else the recovery code. */
export function defaultMethod(c: Challenge, passkeys: boolean): { method: Method; deviceId?: string } {
  const key = c.devices.webauthn[0];
  if (passkeys && key) return { method: 'passkey', deviceId: key.id };
  if (c.devices.authenticators.length > 0) return { method: 'totp' };
  const phone = c.devices.phones[0];
  if (phone) return { method: 'sms', deviceId: phone.id };
  if (c.devices.emails.length > 0) return { method: 'email' };
  return { method: 'recovery' };
}

/** Links to the other factors the user holds (plain links: no JavaScript needed). */
function others(l: string, v: MfaView): SafeHtml {
  const c = v.challenge;
  const links: SafeHtml[] = [];
  if (v.passkeyForm)
    for (const k of c.devices.webauthn)
      if (v.method !== 'passkey' || v.deviceId !== k.id)
        links.push(
          html`<li><a href="${selfUrl(v.returnTo, { method: 'passkey', deviceId: k.id })}">${t(l, 'passkey.mfa.link', { name: k.name })}</a></li>`,
        );
  if (v.method !== 'totp' && c.devices.authenticators.length > 0)
    links.push(html`<li><a href="${selfUrl(v.returnTo, { method: 'totp' })}">${t(l, 'mfa.totp.link')}</a></li>`);
  for (const p of c.devices.phones)
    if (v.method !== 'sms' || v.deviceId !== p.id)
      links.push(
        html`<li><a href="${selfUrl(v.returnTo, { method: 'sms', deviceId: p.id })}">${t(l, 'mfa.sms.link', { phone: p.phoneNumber })}</a></li>`,
      );
  const email = c.devices.emails[0];
  if (email && v.method !== 'email')
    links.push(
      html`<li><a href="${selfUrl(v.returnTo, { method: 'email' })}">${t(l, 'mfa.email.link', { email: email.email })}</a></li>`,
    );
  if (c.userEmail && v.method !== 'recovery')
    links.push(
      html`<li><a href="${selfUrl(v.returnTo, { method: 'recovery' })}">${t(l, 'mfa.recovery.link')}</a></li>`,
    );
  return links.length ? html`<h2>${t(l, 'mfa.other')}</h2><ul class="links plain">${links}</ul>` : html``;
}

/** The page of a pending sign-in's second step: the chosen factor's form and links to the others. */
export function mfaPage(reply: FastifyReply, v: MfaView): SafeHtml {
  const l = reply.request.locale;
  const action = selfUrl(v.returnTo);
  const remember = v.challenge.allowRemember ? checkbox('rememberDevice', t(l, 'mfa.remember')) : html``;
  const err = v.error ? notice('error', v.error) : html``;
  let body: SafeHtml;
  const key = v.challenge.devices.webauthn.find((k) => k.id === v.deviceId);
  if (v.method === 'passkey' && key && v.passkeyForm) {
    body = v.passkeyForm(reply, { action, device: key, remember });
  } else if (v.method === 'totp') {
    body = html`<p>${t(l, 'mfa.totp.intro')}</p>${form(reply, action, [hidden('action', 'totp'), codeField(l), remember], t(l, 'mfa.verify'))}`;
  } else if (v.method === 'recovery') {
    const recovery = field({ name: 'code', label: t(l, 'mfa.recovery.code'), autocomplete: 'off', required: true });
    body = html`<p>${t(l, 'mfa.recovery.intro')}</p>${form(reply, action, [hidden('action', 'recover'), recovery], t(l, 'mfa.recovery.submit'))}`;
  } else {
    const phone = v.challenge.devices.phones.find((p) => p.id === v.deviceId)?.phoneNumber ?? '';
    const email = v.challenge.devices.emails[0]?.email ?? '';
    const vars = { phone, email };
    const sms = v.method === 'sms';
    if (v.sent) {
      const fields = [
        hidden('action', v.method),
        hidden('deviceId', v.deviceId),
        hidden('otcToken', v.sent.otcToken),
        codeField(l),
        remember,
      ];
      body = html`${v.error ? html`` : notice('info', t(l, sms ? 'mfa.sms.sent' : 'mfa.email.sent', vars))}${form(reply, action, fields, t(l, 'mfa.verify'))}`;
    } else {
      const fields = [hidden('action', sms ? 'send-sms' : 'send-email'), hidden('deviceId', v.deviceId)];
      body = html`<p>${t(l, sms ? 'mfa.sms.intro' : 'mfa.email.intro', vars)}</p>${form(reply, action, fields, t(l, 'mfa.send'))}`;
    }
  }
  return html`${err}${body}${others(l, v)}`;
}

/** A sign-in that can no longer finish here (no cookie, an expired or burnt mfaToken): back to the sign-in page. */
export function expiredPage(
  locale: string,
  loginHref: string,
  o: { text?: string; kind?: 'error' | 'info' } = {},
): SafeHtml {
  return html`${notice(o.kind ?? 'error', o.text ?? t(locale, 'mfa.expired'))}<p class="links"><a href="${loginHref}">${t(locale, 'mfa.signin')}</a></p>`;
}
