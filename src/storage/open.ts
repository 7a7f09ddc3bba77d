import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { ClosableDb } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

/** PostgreSQL when DATABASE_URL is set, otherwise embedded PGlite in DATA_DIR/pgdata. */
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<ClosableDb> {
  if (config.databaseUrl) return openPostgres({ url: config.databaseUrl });
  return openPglite({ dataDir: join(config.dataDir, 'pgdata') });
}
