import { periodicWorker } from '../../jobs/periodic.ts';
import type { Logger } from 'pino';
import type { PurgeRule } from '../../jobs/purge.ts';
import type { Db } from '../../storage/db.ts';

export type { PurgeRule } from '../../jobs/purge.ts';

/**
 * Housekeeping of the sign-in flows' short-lived state: expired or spent rows are deleted in bounded batches, so the
 * tables do not grow forever. Each rule is one `DELETE … WHERE ctid IN (SELECT ctid … LIMIT n)` repeated until a
 * batch comes back short or the per-run cap is reached (the next run continues), so no statement holds many locks or
 * runs long. The module owning a table declares its rules (its `…PurgeRules`); the composition root passes them in.
 */
export interface HousekeepingOptions {
  db: Db;
  log: Logger;
  /** Rows per DELETE. */
  batchSize?: number;
  /** DELETE statements per rule and run; what is left waits for the next run. */
  maxBatches?: number;
  /** Between runs (the first runs one minute after start). */
  everyMs?: number;
  /** In the order they run (and are reported). */
  rules: PurgeRule[];
}

export function createHousekeeping(opts: HousekeepingOptions) {
  const { db, log } = opts;
  const batchSize = opts.batchSize ?? 1000;
  const maxBatches = opts.maxBatches ?? 20;
  const everyMs = opts.everyMs ?? 10 * 60_000;
  const { rules } = opts;

  /** Deletes what each rule selects, in bounded batches; answers the rows removed per rule. */
  async function purge(): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    for (const r of rules) {
      let total = 0;
      for (let i = 0; i < maxBatches; i++) {
        const res = await db.query(
          `DELETE FROM ${r.table} WHERE ctid IN (SELECT ctid FROM ${r.table} WHERE ${r.where} LIMIT $1)`,
          [batchSize],
        );
        total += res.rowCount ?? 0;
        if ((res.rowCount ?? 0) < batchSize) break;
      }
      removed[r.name] = total;
    }
    return removed;
  }

  return {
    purge,
    /** A background loop for the job runner (`jobs.attach`): starts and stops with it. */
    worker: periodicWorker(
      () =>
        purge()
          .then((n) => {
            const some = Object.fromEntries(Object.entries(n).filter(([, v]) => v > 0));
            if (Object.keys(some).length) log.info({ removed: some }, 'housekeeping removed expired sign-in state');
          })
          .catch((err) => log.warn({ err: String(err) }, 'housekeeping failed')),
      everyMs,
    ),
  };
}
export type Housekeeping = ReturnType<typeof createHousekeeping>;
