/** Where a page sends the browser after sign-in when no (usable) returnTo was given. */
export const DEFAULT_RETURN_TO = '/account/me';

/**
 * A `returnTo` a page may redirect to: a local path only (starts with '/', not '//' or '/\', no control characters),
 * so a link cannot turn sign-in into an open redirect. Anything else is ignored (the fallback).
 */
export function safeReturnTo(value: unknown, fallback: string = DEFAULT_RETURN_TO): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000) return fallback;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback;
  // Browsers drop tabs and newlines inside URLs ("/\t/evil.com" becomes "//evil.com"): refuse any control character.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return fallback;
  return value;
}
