import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { field, notice } from '../../http/pages/layout.ts';
import { type TextKey, t } from '../../http/pages/text.ts';
import type { BrowserSession, SessionsService } from '../auth/index.ts';
import type { MfaService } from '../mfa/index.ts';
import { form, hidden } from './views.ts';

export type Section = 'profile' | 'password' | 'mfa' | 'passkeys' | 'sessions';
export const DONE = [
  'profile',
  'password',
  'session',
  'sessions',
  'mfa-added',
  'mfa-removed',
  'confirmed',
  'passkey-added',
  'passkey-removed',
] as const;
export type Done = (typeof DONE)[number];

export interface MeView {
  session: BrowserSession;
  devices: Awaited<ReturnType<MfaService['devices']['list']>>;
  sessions: Awaited<ReturnType<SessionsService['list']>>;
  /** The sign-in is recent enough for identity changes (else the MFA section asks for the password first). */
  recent: boolean;
  /** The session's user has a password to confirm (users of SSO or social sign-in sign in again instead). */
  hasPassword: boolean;
  passkeys?: SafeHtml;
  done?: Done;
  error?: { section: Section; text: string };
  /** Values typed into a refused form, shown again (never a password). */
  name?: string;
}

const section = (id: Section, title: string, body: SafeHtml, err?: MeView['error']) =>
  html`<section id="${id}" aria-labelledby="h-${id}"><h2 id="h-${id}">${title}</h2>${err?.section === id ? notice('error', err.text) : ''}${body}</section>`;

/** A time as the page shows it (the locale's medium date and short time, UTC). */
export function when(locale: string, iso: string): string {
  const d = new Date(iso);
  try {
    return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(d)} UTC`;
  } catch {
    return iso;
  }
}

function mfaSection(reply: FastifyReply, v: MeView): SafeHtml {
  const l = reply.request.locale;
  const items: SafeHtml[] = [];
  const remove = (kind: string, id: string, label: string) =>
    v.recent
      ? form(reply, '/account/me/mfa/remove', [hidden('kind', kind), hidden('deviceId', id)], t(l, 'me.mfa.remove'), {
          secondary: true,
          label: `${t(l, 'me.mfa.remove')}: ${label}`,
        })
      : html``;
  for (const a of v.devices.authenticators)
    items.push(html`<li><span>${t(l, 'me.mfa.app')}</span>${remove('authenticator', a.id, t(l, 'me.mfa.app'))}</li>`);
  for (const p of v.devices.phones) {
    const label = t(l, 'me.mfa.phone', { phone: p.phoneNumber });
    items.push(html`<li><span>${label}</span>${remove('sms', p.id, label)}</li>`);
  }
  // A user whose only second factor is a passkey has it listed under Passkeys, not "no second factor".
  const none = v.devices.webauthn?.length ? 'me.mfa.passkeys-only' : 'me.mfa.none';
  const list = items.length ? html`<ul class="plain">${items}</ul>` : html`<p class="muted">${t(l, none)}</p>`;
  if (!v.recent) {
    const confirm = v.hasPassword
      ? html`<p>${t(l, 'me.mfa.confirm')}</p>${form(
          reply,
          '/account/me/confirm',
          field({
            name: 'confirmPassword',
            label: t(l, 'signin.password'),
            type: 'password',
            autocomplete: 'current-password',
            required: true,
          }),
          t(l, 'me.confirm.submit'),
        )}`
      : html`<p>${t(l, 'me.confirm.unavailable')}</p>`;
    return html`${list}${confirm}`;
  }
  return html`${list}${form(reply, '/account/me/mfa/add', [], t(l, 'me.mfa.add'), { secondary: true })}`;
}

function sessionsSection(reply: FastifyReply, v: MeView): SafeHtml {
  const l = reply.request.locale;
  const items = v.sessions.map((s) => {
    const device = s.userAgent || t(l, 'me.sessions.unknown');
    const seen = t(l, 'me.sessions.seen', { time: when(l, s.lastActiveAt), ip: s.ipAddress ?? '' });
    const action = s.current
      ? html`<strong class="current">${t(l, 'me.sessions.current')}</strong>`
      : form(reply, '/account/me/sessions/revoke', hidden('sessionId', s.id), t(l, 'me.sessions.revoke'), {
          secondary: true,
          label: t(l, 'me.sessions.revoke.label', { device }),
        });
    return html`<li${s.current ? html` aria-current="true"` : ''}><span>${device}<br><span class="muted">${seen}</span></span>${action}</li>`;
  });
  const others = v.sessions.some((s) => !s.current)
    ? form(reply, '/account/me/sessions/others', [], t(l, 'me.sessions.others'), { secondary: true })
    : html``;
  return html`<ul class="plain sessions">${items}</ul>${others}`;
}

/** The "my account" page: profile, password, second factors, passkeys (when installed), sessions. */
export function mePage(reply: FastifyReply, v: MeView): SafeHtml {
  const l = reply.request.locale;
  const u = v.session.user;
  const done = v.done ? notice('info', t(l, `me.done.${v.done}` as TextKey)) : html``;
  const profile = html`<p><span class="muted">${t(l, 'me.email')}</span><br>${u.email ?? u.username ?? ''}</p>${form(
    reply,
    '/account/me/profile',
    field({ name: 'name', label: t(l, 'me.name'), value: v.name ?? u.name ?? '', autocomplete: 'name' }),
    t(l, 'me.save'),
  )}`;
  const password = form(
    reply,
    '/account/me/password',
    [
      field({
        name: 'password',
        label: t(l, 'me.password.current'),
        type: 'password',
        autocomplete: 'current-password',
        required: true,
      }),
      field({
        name: 'newPassword',
        label: t(l, 'me.password.new'),
        type: 'password',
        autocomplete: 'new-password',
        required: true,
      }),
    ],
    t(l, 'me.password.submit'),
  );
  return html`${done}
${section('profile', t(l, 'me.profile'), profile, v.error)}
${v.hasPassword ? section('password', t(l, 'me.password'), password, v.error) : ''}
${section('mfa', t(l, 'me.mfa'), mfaSection(reply, v), v.error)}
${v.passkeys ? section('passkeys', t(l, 'me.passkeys'), v.passkeys, v.error) : ''}
${section('sessions', t(l, 'me.sessions'), sessionsSection(reply, v), v.error)}`;
}
