import { AppError } from '../../http/errors.ts';

/**
 * Redirect URLs are accepted only from the environment's allow-list (`allowedRedirectUrls` of
 * POST /identity/resources/configurations/v1): an entry matches the URL exactly (query and fragment ignored), or,
 * when it ends with `*`, any URL that starts with the part before the `*`. An empty list refuses every redirect.
 */
export function assertAllowedRedirect(allowList: readonly string[], url: string, field: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError('SSO_REDIRECT_NOT_ALLOWED', `${field} must be an absolute URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new AppError('SSO_REDIRECT_NOT_ALLOWED', `${field} must be an http(s) URL`);
  const bare = `${parsed.origin}${parsed.pathname}`;
  const ok = allowList.some((entry) =>
    entry.endsWith('*')
      ? url.startsWith(entry.slice(0, -1)) && !url.slice(entry.length - 1).includes('..')
      : entry.split(/[?#]/)[0] === bare,
  );
  if (!ok)
    throw new AppError('SSO_REDIRECT_NOT_ALLOWED', `${field} ${bare} is not in the environment's allowedRedirectUrls`);
  return url;
}
