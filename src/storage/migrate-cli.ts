import { loadConfig } from '../config.ts';
import { migrate } from './migrate.ts';
import { openDatabase } from './open.ts';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded store) and exits. */
const config = loadConfig();
const db = await openDatabase(config);
try {
  const { applied } = await migrate(db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await db.close();
}
