import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.ts';
import { html, type SafeHtml } from '../../http/pages/html.ts';
import { csrfField } from '../../http/pages/kit.ts';
import { notice } from '../../http/pages/layout.ts';
import { t, type TextKey } from '../../http/pages/text.ts';
import { refreshCookie, type ClientInfo, type LoginService } from '../auth/index.ts';
import type { CaptchaService } from '../captcha/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { InvitationsService } from '../invitations/index.ts';
import type { PasswordlessService } from '../passwordless/index.ts';
import type { ResetService, VerificationService } from '../recovery/index.ts';
import type { SignupService } from '../signup/index.ts';
import type { SocialService } from '../social/index.ts';
import type { SsoLoginService } from '../sso/index.ts';

/** What the sign-in pages use: the services behind the API's sign-in routes, so their rules and limits apply. */
export interface SigninPagesDeps {
  login: LoginService;
  environment: EnvironmentService;
  captcha: CaptchaService;
  passwordless: PasswordlessService;
  social: SocialService;
  sso: SsoLoginService;
  signup: SignupService;
  reset: ResetService;
  verification: VerificationService;
  invitations: InvitationsService;
  /** The users module's self-service unlock with an emailed token. */
  unlock: (token: string) => Promise<void>;
  secureCookies: boolean;
  /** Another way to sign in on /account/login (the WebAuthn pages' passkey button) and the scripts it needs. */
  loginExtra?: { render: (reply: FastifyReply, returnTo: string) => SafeHtml; scripts: string[] };
}

export const MFA_COOKIE = 'gh_mfa';

export const clientOf = (req: FastifyRequest): ClientInfo => ({
  ip: req.ip,
  userAgent: req.headers['user-agent'],
  cookie: req.headers.cookie,
});

/** The captcha policy's check, as the API's protected routes run it; the token comes from the provider's form field. */
export async function checkCaptcha(
  deps: SigninPagesDeps,
  req: FastifyRequest,
  who: { email?: string; userId?: string },
) {
  const b = (req.body ?? {}) as Record<string, unknown>;
  const token = ['g-recaptcha-response', 'h-captcha-response', 'cf-turnstile-response']
    .map((k) => b[k])
    .find((v): v is string => typeof v === 'string' && v.length > 0);
  await deps.captcha.check({ token, ip: req.ip, ...who });
}

/** The text of a refused request: our own words for the codes a user can meet, never the API's developer message. */
export function failureText(locale: string, err: unknown, fallback: TextKey): string {
  if (!(err instanceof AppError)) throw err;
  if (err.status >= 500) throw err;
  const code = err.code;
  if (code === 'RATE_LIMITED' || err.status === 429) return t(locale, 'signin.rateLimited');
  if (code.startsWith('CAPTCHA')) return t(locale, 'signin.captcha');
  if (code === 'USER_LOCKED') return t(locale, 'signin.locked');
  // The password policy's messages name the rule a person must follow ("at least 8 characters").
  if (code === 'WEAK_PASSWORD') return err.message;
  return t(locale, fallback);
}

/** A re-rendered form after a refusal: the status of the refusal (401 wrong password, 429 limited, ...). */
export const statusOf = (err: unknown) => (err instanceof AppError && err.status < 500 ? err.status : 400);

/**
 * Finishes a sign-in a flow answered: tokens set the browser session (gh_refresh) and go to returnTo; an MFA
 * challenge keeps its token in gh_mfa for /account/mfa; a reset answer sends the user to set a password.
 */
export async function finishSignIn(
  deps: SigninPagesDeps,
  reply: FastifyReply,
  answered: object,
  returnTo: string,
): Promise<FastifyReply | undefined> {
  const answer = answered as Record<string, unknown>;
  if (typeof answer.refreshToken === 'string') {
    const settings = await deps.environment.cachedSettings();
    reply.header('set-cookie', refreshCookie(answer.refreshToken, settings, deps.secureCookies));
    return reply.redirect(returnTo, 303);
  }
  if (answer.mfaRequired === true && typeof answer.mfaToken === 'string') {
    const secure = deps.secureCookies ? '; Secure' : '';
    const value = encodeURIComponent(answer.mfaToken);
    reply.header('set-cookie', `${MFA_COOKIE}=${value}; Path=/account; HttpOnly; SameSite=Lax; Max-Age=600${secure}`);
    return reply.redirect(`/account/mfa?${new URLSearchParams({ returnTo })}`, 303);
  }
  if (typeof answer.resetPasswordToken === 'string' && typeof answer.userId === 'string') {
    const q = new URLSearchParams({ userId: answer.userId, token: answer.resetPasswordToken, returnTo });
    return reply.redirect(`/account/reset-password?${q}`, 303);
  }
  return undefined;
}

/** A one-button form (the confirmation step of an emailed link: a GET never consumes a token). */
export function confirmForm(
  reply: FastifyReply,
  action: string,
  hidden: Record<string, string>,
  label: string,
  extra: SafeHtml | string = '',
): SafeHtml {
  return html`<form method="post" action="${action}">${csrfField(reply)}
${Object.entries(hidden).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
${extra}<p><button type="submit">${label}</button></p></form>`;
}

/** A page with a message and a link back to sign-in. */
export function messagePage(reply: FastifyReply, title: TextKey, kind: 'error' | 'info', text: string, status = 200) {
  const locale = reply.request.locale;
  return reply.status(status).page({
    title,
    body: html`${notice(kind, text)}<p class="links"><a href="/account/login">${t(locale, 'back.signin')}</a></p>`,
  });
}
