import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClosableDb } from '../../src/storage/db.ts';
import { loadMigrations, migrate } from '../../src/storage/migrate.ts';
import { openPglite } from '../../src/storage/pglite.ts';
import { openPostgres } from '../../src/storage/postgres.ts';

const CACHE = join(process.cwd(), 'node_modules', '.cache', 'gatehouse-test');

/**
 * A migrated database for one test file. With TEST_DATABASE_URL: a fresh schema on that server (dropped on close).
 * Otherwise: an in-memory PGlite cloned from a migrated template that the first test file builds and the others
 * reuse (keyed by the migrations' checksums), which skips a 4 s initdb per file.
 */
export async function openTestDb(): Promise<ClosableDb> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const db = await openPostgres({ url, schema, max: 5 });
    await migrate(db);
    const close = db.close;
    return Object.assign(db, {
      async close() {
        await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
        await close();
      },
    });
  }
  const template = await templateFile();
  const db = await openPglite({ loadDataDir: new Blob([readFileSync(template)]) });
  await migrate(db); // no-op unless the template is behind
  return db;
}

async function templateFile(): Promise<string> {
  const key = createHash('sha256')
    .update(
      loadMigrations()
        .map((m) => m.checksum)
        .join(),
    )
    .digest('hex')
    .slice(0, 16);
  const file = join(CACHE, `template-${key}.tar.gz`);
  const lock = `${file}.lock`;
  mkdirSync(CACHE, { recursive: true });
  for (let waited = 0; !existsSync(file); waited += 100) {
    try {
      mkdirSync(lock);
    } catch {
      // Another test process is building it; a lock older than 2 minutes is from a crashed run.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 120_000)
        rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const db = await openPglite({});
      await migrate(db);
      const dump = await db.pg.dumpDataDir('gzip');
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
      renameSync(tmp, file);
      await db.close();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return file;
}
