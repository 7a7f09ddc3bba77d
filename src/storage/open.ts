import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { ClosableDb } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';
import { lockDataDir } from './data-dir-lock.ts';
export { DataDirInUse } from './data-dir-lock.ts';

/** PostgreSQL when DATABASE_URL is set, otherwise embedded PGlite in DATA_DIR/pgdata. */
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<ClosableDb> {
  if (config.databaseUrl) return openPostgres({ url: config.databaseUrl });
  const unlock = lockDataDir(config.dataDir);
  try {
    const db = await openPglite({ dataDir: join(config.dataDir, 'pgdata') });
    const close = db.close.bind(db);
    db.close = async () => {
      await close();
      unlock();
    };
    return db;
  } catch (err) {
    unlock();
    throw err;
  }
}
