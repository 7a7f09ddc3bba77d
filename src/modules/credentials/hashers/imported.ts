import { timingSafeEqual } from 'node:crypto';

/**
 * Imported hashes whose string does not say how it was made are stored self-describing:
 * `$gh-<type>$<base64url of the config JSON>$<passwordHash as imported>`. The config cannot contain `$` once
 * base64url-encoded, so the imported hash (which may contain the separator) is everything after the second `$`.
 */
export function encodeImported(type: string, config: Record<string, unknown> | undefined, hash: string): string {
  return `$gh-${type}$${Buffer.from(JSON.stringify(config ?? {})).toString('base64url')}$${hash}`;
}

export function decodeImported(
  type: string,
  stored: string,
): { config: Record<string, unknown>; hash: string } | undefined {
  const prefix = `$gh-${type}$`;
  if (!stored.startsWith(prefix)) return undefined;
  const rest = stored.slice(prefix.length);
  const cut = rest.indexOf('$');
  if (cut < 0) return undefined;
  try {
    const config = JSON.parse(Buffer.from(rest.slice(0, cut), 'base64url').toString('utf8')) as unknown;
    if (config === null || typeof config !== 'object' || Array.isArray(config)) return undefined;
    return { config: config as Record<string, unknown>, hash: rest.slice(cut + 1) };
  } catch {
    return undefined;
  }
}

export const isPrefixed = (type: string) => (stored: string) => stored.startsWith(`$gh-${type}$`);

/** Constant-time equality of two byte strings (a length mismatch answers false at once: lengths are not secret). */
export function bytesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

export const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;

/** A problem message when `v` is not an integer in [min, max]. */
export function intIn(name: string, v: unknown, min: number, max: number): string | undefined {
  const n = int(v);
  return n === undefined || n < min || n > max
    ? `passwordHashConfig.${name} must be a whole number from ${min} to ${max}`
    : undefined;
}

/** scrypt needs 128·N·r·p bytes; Node refuses above `maxmem`, so it is sized to the job (with headroom). */
export const scryptMaxmem = (N: number, r: number, p: number) => 256 * N * r * p + 1024 * 1024;
