import { createHash } from 'node:crypto';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The checksum recorded for an applied migration: of the file exactly as it was. */
export const fileChecksum = (sql: string) => sha256(sql);

/**
 * The checksum of what a migration does: its SQL without comments, trailing spaces and blank lines. Two files with the
 * same statement checksum differ only in comments, so an applied file may have its comments edited (see
 * `migrations/comment-edits.json`). Quoted text (strings, identifiers, dollar-quoted bodies) is kept as written.
 */
export function statementChecksum(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      const end = closingQuote(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i, i + 64))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      const stop = end < 0 ? sql.length : end + tag.length;
      out += sql.slice(i, stop);
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  const lines = out
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '');
  return sha256(lines.join('\n'));
}

/** Index just past the quote that closes the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number, q: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}
