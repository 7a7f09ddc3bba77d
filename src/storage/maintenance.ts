import type { Logger } from 'pino';
import type { ClosableDb } from './db.ts';

/**
 * Embedded PGlite runs no autovacuum, so the planner never gets table statistics (and index-only scans never get a
 * visibility map) and picks poor plans as tables grow (measured in docs/performance.md). The server runs
 * `VACUUM (ANALYZE)` itself: shortly after start (not before listening, so cold start is not delayed) and then every
 * `everyMs`. A PostgreSQL server does this on its own.
 */
export function startMaintenance(db: ClosableDb, log: Logger, everyMs = 10 * 60_000): () => void {
  if (db.kind !== 'pglite') return () => {};
  let running = false;
  const analyze = async () => {
    if (running) return;
    running = true;
    const started = Date.now();
    try {
      await db.query('VACUUM (ANALYZE)');
      log.debug({ ms: Date.now() - started }, 'vacuum analyze done');
    } catch (err) {
      log.warn({ err: String(err) }, 'vacuum analyze failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(analyze, 5_000);
  const every = setInterval(analyze, everyMs);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
