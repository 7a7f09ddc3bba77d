import { createHash } from 'node:crypto';

/**
 * Static SQL of the hot paths (sign-in, refresh) marked for named prepared statements. On PostgreSQL (`pg`), a marked
 * text runs as `{name, text, values}`: each pooled connection parses and plans it once, then only binds and executes
 * it. PGlite's store (pglite-protocol.ts) does the same with named statements on its one session. Mark only constant
 * text (never text with inlined values): every marked text stays prepared on every connection for the connection's
 * life. Bounded: past MAX_PREPARED texts, further marks are ignored (the statement still runs, unnamed).
 */
const MAX_PREPARED = 256;
const names = new Map<string, string>();

/** Marks `sql` as static and returns it unchanged (use: `const SQL = prepared(\`...\`)`). */
export function prepared(sql: string): string {
  if (!names.has(sql) && names.size < MAX_PREPARED)
    names.set(sql, `gh_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`);
  return sql;
}

/** The statement name of a marked text, or undefined. */
export const preparedName = (sql: string): string | undefined => names.get(sql);
