import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';
import { fileChecksum, statementChecksum } from './migration-text.ts';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
  /** Set when the file's comments were edited after it was applied: the checksums it replaces, and its statements'. */
  commentEdit?: CommentEdit;
}

export interface CommentEdit {
  replaces: string[];
  statements: string;
}

/** `comment-edits.json`: per version, a comment-only edit of an applied file (scripts/record-migration-comment-edit.ts). */
export function loadCommentEdits(dir = MIGRATIONS_DIR): Record<string, CommentEdit> {
  const file = join(dir, 'comment-edits.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, CommentEdit>) : {};
}

/** Reads `NNNN_name.sql` files in version order. Two files with one number are an error. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const seen = new Set<number>();
  const edits = loadCommentEdits(dir);
  return files.map((file) => {
    const version = Number(file.slice(0, 4));
    if (seen.has(version)) throw new Error(`migration ${file}: version ${version} is used twice`);
    seen.add(version);
    const sql = readFileSync(join(dir, file), 'utf8');
    const commentEdit = edits[file.slice(0, 4)];
    return { version, name: file.replace(/\.sql$/, ''), sql, checksum: fileChecksum(sql), commentEdit };
  });
}

/**
 * Applies pending migrations forward-only, each in its own transaction, under an advisory lock so two
 * processes starting together do not race. An applied migration whose file changed is refused: history is not rewritten.
 * The one exception is a recorded comment-only edit, after which the applied row takes the file's new checksum.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<{ applied: string[] }> {
  await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied: string[] = [];
  for (const m of migrations) {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(7243001)');
      const { rows } = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1',
        [m.version],
      );
      if (rows[0]) {
        if (rows[0].checksum === m.checksum) return;
        if (isRecordedCommentEdit(m, rows[0].checksum)) {
          await tx.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1', [m.version, m.checksum]);
          return;
        }
        throw new Error(
          `migration ${m.name} was changed after it was applied (checksum mismatch); add a new migration instead`,
        );
      }
      await tx.query(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
      applied.push(m.name);
    });
  }
  return { applied };
}

/** The applied file was this one before a recorded edit, and the edit left its statements as they were. */
function isRecordedCommentEdit(m: Migration, applied: string): boolean {
  return !!m.commentEdit?.replaces.includes(applied) && m.commentEdit.statements === statementChecksum(m.sql);
}
