/**
 * The value of cookie `name` in a Cookie header, or undefined. A value that is not valid percent-encoding is answered
 * as sent (a malformed cookie is the client's bad input: it then fails as an unknown token, never as a 500).
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    const raw = v.join('=');
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}
