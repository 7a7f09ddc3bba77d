import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AuthContext } from '../../http/auth.ts';
import { readCookie } from '../../http/cookies.ts';
import { AppError } from '../../http/errors.ts';
import type { SafeHtml } from '../../http/pages/html.ts';
import { safeReturnTo } from '../../http/pages/return-to.ts';
import { type TextKey, t } from '../../http/pages/text.ts';
import {
  type BrowserSession,
  type ClientInfo,
  type LoginService,
  REFRESH_COOKIE,
  refreshCookie,
  type SessionsService,
} from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { Finished, MfaService, WebAuthnDevice } from '../mfa/index.ts';
import type { UsersService } from '../users/index.ts';

export interface AccountPagesDeps {
  mfa: MfaService;
  login: LoginService;
  sessions: SessionsService;
  users: UsersService;
  environment: EnvironmentService;
  /** Verifies an access token (the composition root's): the step-up runs on the session's own token. */
  authenticate: (token: string) => Promise<AuthContext>;
  secureCookies: boolean;
  /** RECENT_AUTH_MAX_AGE: identity changes (second factors) need a sign-in at most this many seconds old, as the API. */
  recentAuthMaxAge: number;
  /** The passkeys section of /account/me, when the WebAuthn pages are installed; rendered in its own place. */
  passkeys?: (req: FastifyRequest, reply: FastifyReply, session: BrowserSession) => Promise<SafeHtml>;
  /** A passkey (WebAuthn device) as a factor of /account/mfa, when the WebAuthn pages are installed. */
  passkeyFactor?: PasskeyFactor;
  /** The script assets of the passkey parts (added to the pages that show them). */
  passkeyScripts?: string[];
}

/** The passkey step of /account/mfa, rendered and verified by the WebAuthn pages. */
export interface PasskeyFactor {
  /** The form for one device, posting `action=passkey` to `action` (its script fills in the assertion). */
  form: (reply: FastifyReply, o: { action: string; device: WebAuthnDevice; remember: SafeHtml }) => SafeHtml;
  /** Finishes the pending sign-in with that assertion (the API's …/user/mfa/webauthn/{deviceId}/verify). */
  verify: (
    b: { mfaToken: string; deviceId: string; response: string; webauthnToken: string; rememberDevice: boolean },
    client: ClientInfo,
  ) => Promise<Finished>;
}

/** The pending second step of a sign-in: the mfaToken, set by the sign-in page for /account only. */
export const MFA_COOKIE = 'gh_mfa';
export const HOME = '/account/me';

/** The CSRF field of every form body: optional to the schema, so a missing one is formGuard's 403, not a 400. */
export const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 512 })) };

/** A local path to go to after the flow (the kit's rule: never another origin), else HOME. */
export const localReturnTo = (v: string | undefined): string => safeReturnTo(v, HOME);

/** The sign-in page of a returnTo (the other pages send a browser there when it has no session). */
export const loginUrl = (returnTo: string) => `/account/login?returnTo=${encodeURIComponent(returnTo)}`;

export const clientOf = (req: FastifyRequest): ClientInfo => ({
  ip: req.ip,
  userAgent: req.headers['user-agent'],
  cookie: req.headers.cookie,
});

export const mfaTokenOf = (req: FastifyRequest) => readCookie(req.headers.cookie, MFA_COOKIE) || undefined;

export const clearMfaCookie = (secure: boolean) =>
  `${MFA_COOKIE}=; Path=/account; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;

/** The remember-device cookie of a finished sign-in (the MFA services answer it). */
export interface RememberCookie {
  name: string;
  value: string;
  maxAge: number;
}

/** The Set-Cookie values of a finished sign-in: the refresh cookie and, when asked and allowed, remember-device. */
export async function signedInCookies(
  deps: Pick<AccountPagesDeps, 'environment' | 'secureCookies'>,
  refreshToken: unknown,
  remember?: RememberCookie,
): Promise<string[]> {
  const s = await deps.environment.cachedSettings();
  const out: string[] = [];
  if (typeof refreshToken === 'string') out.push(refreshCookie(refreshToken, s, deps.secureCookies));
  if (remember) {
    // As the API's MFA routes set it: the environment's SameSite, Secure under https.
    const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
    const secure = deps.secureCookies || sameSite === 'None' ? '; Secure' : '';
    out.push(
      `${remember.name}=${encodeURIComponent(remember.value)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${remember.maxAge}${secure}`,
    );
  }
  return out;
}

/** Who is signed in on this browser (the gh_refresh cookie's live session), or undefined. */
export const browserSession = (deps: Pick<AccountPagesDeps, 'login'>, req: FastifyRequest) =>
  deps.login.browserSession(readCookie(req.headers.cookie, REFRESH_COOKIE), clientOf(req));

/** Whether the session's authentication is recent enough for an identity change (the API's identity rule). */
export const isRecent = (deps: Pick<AccountPagesDeps, 'recentAuthMaxAge'>, s: BrowserSession) =>
  Date.now() - s.authTime.getTime() <= deps.recentAuthMaxAge * 1000;

const ERROR_TEXTS: Partial<Record<string, TextKey>> = {
  MFA_INVALID_CODE: 'mfa.error.code',
  MFA_CODE_REUSED: 'mfa.error.reused',
  RATE_LIMITED: 'mfa.error.rate',
  USER_LOCKED: 'mfa.error.locked',
  MFA_INVALID_RECOVERY: 'mfa.error.recovery',
  MFA_INVALID_OTC: 'mfa.error.otc',
  MFA_STRATEGY_INACTIVE: 'mfa.error.inactive',
  MFA_NO_PENDING_ENROLLMENT: 'mfa.error.enrolment',
  MFA_REQUIRED_BY_POLICY: 'mfa.error.last',
  MFA_TOKEN_INVALID: 'mfa.expired',
  CURRENT_PASSWORD_INVALID: 'me.password.wrong',
  RECENT_AUTHENTICATION_REQUIRED: 'me.recent',
  WEBAUTHN_VERIFICATION_FAILED: 'passkey.error.failed',
  WEBAUTHN_CHALLENGE_INVALID: 'passkey.error.expired',
  WEBAUTHN_CREDENTIAL_UNKNOWN: 'passkey.error.unknown',
  WEBAUTHN_COUNTER_REGRESSION: 'passkey.error.failed',
  WEBAUTHN_CREDENTIAL_EXISTS: 'passkey.error.exists',
  MFA_DEVICE_NOT_FOUND: 'passkey.error.unknown',
};

/**
 * What a page says of a refused input, its status (and retry-after) set on the reply: our text for the errors a
 * person can meet, else the service's message (a password-policy rule, a bad field). Anything that is not an
 * AppError below 500 is a fault: rethrown to the kit's error page.
 */
export function refusal(reply: FastifyReply, err: unknown): string {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  for (const [k, v] of Object.entries(err.headers ?? {})) reply.header(k, v);
  reply.status(err.status);
  const key = ERROR_TEXTS[err.code];
  return key ? t(reply.request.locale, key) : err.message;
}
