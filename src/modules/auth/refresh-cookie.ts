import type { VendorSettings } from '../environment/index.ts';

export const REFRESH_COOKIE = 'gh_refresh';

/**
 * The Set-Cookie value of a browser's refresh token (null clears it): HttpOnly, the environment's SameSite, Secure
 * under https or SameSite=None. The API's sign-in routes and the hosted pages set the same cookie, so a browser
 * signed in by either is signed in for both.
 */
export function refreshCookie(
  token: string | null,
  s: Pick<VendorSettings, 'cookieSameSite' | 'defaultRefreshTokenExpiration'>,
  secureCookies: boolean,
): string {
  const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
  const secure = secureCookies || sameSite === 'None' ? '; Secure' : '';
  return token === null
    ? `${REFRESH_COOKIE}=; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=0${secure}`
    : `${REFRESH_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${s.defaultRefreshTokenExpiration}${secure}`;
}
