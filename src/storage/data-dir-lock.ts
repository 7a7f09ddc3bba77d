import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Another live process holds this DATA_DIR: embedded PGlite is one process's database. */
export class DataDirInUse extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes DATA_DIR/gatehouse.pid for this process. A second instance on the same PGlite directory would corrupt it, so
 * it stops with a clear error instead; a lock left by a killed process (its pid gone) is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'gatehouse.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder))
        throw new DataDirInUse(
          `DATA_DIR ${dataDir} is in use by process ${holder}: embedded PGlite serves one process. Stop it, use another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server between instances`,
        );
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUse(`DATA_DIR ${dataDir}: could not take ${file}`);
}
