/** PostgreSQL error classes both drivers report in `code` (pg and PGlite alike). */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === '23505';
export const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === '23503';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
