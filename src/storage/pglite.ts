import { PGlite, TransactionAbortedError, type Results } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { mkdirSync } from 'node:fs';
import { joinedTransaction, markTransaction, outsideTransaction, type ClosableDb, type QueryResult } from './db.ts';
import { protocolRunner } from './pglite-protocol.ts';

const result = <T>(r: Results | undefined): QueryResult<T> => ({
  rows: (r?.rows ?? []) as T[],
  rowCount: r?.affectedRows ?? r?.rows.length ?? 0,
});

/**
 * Embedded PostgreSQL. `dataDir` undefined keeps it in memory; `loadDataDir` clones a dumped template.
 *
 * Statements go through the wire protocol directly (pglite-protocol.ts: one call into WebAssembly per statement, named
 * prepared statements for texts marked `prepared()`), under PGlite's own locks: its transaction lock for a statement
 * outside a transaction and for the whole of a transaction, its query lock around every call. A statement without
 * parameters uses the simple protocol, so a migration file with several statements runs as one call, as on `pg`.
 */
export async function openPglite(opts: {
  dataDir?: string;
  loadDataDir?: Blob | File;
}): Promise<ClosableDb & { pg: PGlite }> {
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  // pg_trgm: the account list's filter index (migration 0025); the extension's files must be loaded at every open.
  const pg = await PGlite.create({ dataDir: opts.dataDir, loadDataDir: opts.loadDataDir, extensions: { pg_trgm } });
  const runner = protocolRunner(pg);
  const run = (sql: string, params: unknown[] | undefined, inTransaction: boolean, first?: string) =>
    pg.runExclusive(() =>
      params && params.length > 0
        ? runner.statement(sql, params, inTransaction, first)
        : runner.simple(sql, inTransaction, first),
    );
  return {
    kind: 'pglite',
    pg,
    async query<T>(sql: string, params?: unknown[]) {
      outsideTransaction(sql);
      await pg._checkReady();
      return result<T>(await pg._runExclusiveTransaction(() => run(sql, params, false)));
    },
    async transaction(fn) {
      outsideTransaction('BEGIN');
      await pg._checkReady();
      return pg._runExclusiveTransaction(async () => {
        // BEGIN travels in the same call as the transaction's first statement (a transaction without statements sends
        // nothing); the lock held meanwhile keeps every other statement out.
        let begun = false;
        let open = true;
        const tx = joinedTransaction({
          async query<T>(sql: string, params?: unknown[]) {
            if (!open) throw new Error(`query on a finished transaction: ${sql.slice(0, 80)}`);
            const first = begun ? undefined : 'BEGIN';
            begun = true;
            return result<T>(await run(sql, params, true, first));
          },
        });
        try {
          const value = await markTransaction(() => fn(tx));
          open = false;
          // COMMIT of a transaction a failed statement aborted answers ROLLBACK: an error, as PGlite's own API makes it.
          if (begun && (await run('COMMIT', undefined, true))?.command === 'ROLLBACK')
            throw new TransactionAbortedError();
          return value;
        } catch (err) {
          if (open) {
            open = false;
            if (begun) await run('ROLLBACK', undefined, true).catch(() => {});
          }
          throw err;
        }
      });
    },
    // PGlite delivers a committed NOTIFY to its own listeners: every app on this database hears every other's writes.
    async listen(channel, onMessage, onState) {
      const stop = await pg.listen(channel, onMessage);
      onState({ connected: true });
      return async () => {
        if (!pg.closed) await stop();
      };
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}
