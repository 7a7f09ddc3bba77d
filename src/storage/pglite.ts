import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { mkdirSync } from 'node:fs';
import type { Transaction } from '@electric-sql/pglite';
import { joinedTransaction, markTransaction, outsideTransaction, type ClosableDb, type QueryResult } from './db.ts';

/**
 * A statement without parameters goes through the simple protocol (`exec`), so a migration file with several
 * statements runs as one call, as it does on `pg`; with parameters, the extended protocol (`query`).
 */
async function run<T>(q: PGlite | Transaction, sql: string, params?: unknown[]): Promise<QueryResult<T>> {
  if (!params || params.length === 0) {
    const results = await q.exec(sql);
    const last = results[results.length - 1];
    return { rows: (last?.rows ?? []) as T[], rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
  }
  const r = await q.query<T>(sql, params);
  return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
}

/** Embedded PostgreSQL. `dataDir` undefined keeps it in memory; `loadDataDir` clones a dumped template. */
export async function openPglite(opts: { dataDir?: string; loadDataDir?: Blob | File }): Promise<ClosableDb & { pg: PGlite }> {
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  // pg_trgm: the account list's filter index (migration 0025); the extension's files must be loaded at every open.
  const pg = await PGlite.create({ dataDir: opts.dataDir, loadDataDir: opts.loadDataDir, extensions: { pg_trgm } });
  return {
    kind: 'pglite',
    pg,
    async query(sql, params) {
      outsideTransaction(sql);
      return run(pg, sql, params);
    },
    async transaction(fn) {
      outsideTransaction('BEGIN');
      return pg.transaction((tx) => markTransaction(() => fn(joinedTransaction({ query: (sql, params) => run(tx, sql, params) }))));
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}
