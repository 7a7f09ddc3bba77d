import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/** Reads `NNNN_name.sql` files in version order. Two files with one number are an error. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const seen = new Set<number>();
  return files.map((file) => {
    const version = Number(file.slice(0, 4));
    if (seen.has(version)) throw new Error(`migration ${file}: version ${version} is used twice`);
    seen.add(version);
    const sql = readFileSync(join(dir, file), 'utf8');
    return { version, name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

/**
 * Applies pending migrations forward-only, each in its own transaction, under an advisory lock so two
 * processes starting together do not race. An applied migration whose file changed is refused: history is not rewritten.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<{ applied: string[] }> {
  await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied: string[] = [];
  for (const m of migrations) {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(7243001)');
      const { rows } = await tx.query<{ checksum: string }>('SELECT checksum FROM schema_migrations WHERE version = $1', [m.version]);
      if (rows[0]) {
        if (rows[0].checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was changed after it was applied (checksum mismatch); add a new migration instead`);
        }
        return;
      }
      await tx.query(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      applied.push(m.name);
    });
  }
  return { applied };
}
