import pg from 'pg';
import { joinedTransaction, markTransaction, outsideTransaction, type ClosableDb } from './db.ts';
import { preparedName } from './prepared.ts';

// int8 (count(*), bigint columns) as JS numbers, like PGlite does.
pg.types.setTypeParser(20, (v) => Number(v));

/** A statement for `pg`: text marked static (src/storage/prepared.ts) with parameters runs as a named prepared statement. */
function statement(sql: string, params?: unknown[]): pg.QueryConfig {
  const name = params && params.length > 0 ? preparedName(sql) : undefined;
  return name ? { name, text: sql, values: params } : { text: sql, values: params };
}

/** A PostgreSQL server through a pool. `schema` pins the search_path (tests use one schema per file). */
export async function openPostgres(opts: {
  url: string;
  schema?: string;
  max?: number;
}): Promise<ClosableDb & { pool: pg.Pool }> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
  });
  // A broken idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  if (opts.schema) {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema.replace(/"/g, '')}"`);
  }
  return {
    kind: 'postgres',
    pool,
    async query<T>(sql: string, params?: unknown[]) {
      outsideTransaction(sql);
      const r = await pool.query(statement(sql, params));
      return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
    },
    async transaction(fn) {
      outsideTransaction('BEGIN');
      const client = await pool.connect();
      let tail: Promise<unknown> = Promise.resolve();
      try {
        await client.query('BEGIN');
        const result = await markTransaction(() =>
          fn(
            joinedTransaction({
              // One connection runs one statement at a time: statements sent together (Promise.all inside a
              // transaction) are chained here rather than handed to pg while it is busy (deprecated, an error in pg 9).
              query<T>(sql: string, params?: unknown[]) {
                const run = tail.then(() => client.query(statement(sql, params)));
                tail = run.then(
                  () => undefined,
                  () => undefined,
                );
                return run.then((r) => ({ rows: r.rows as T[], rowCount: r.rowCount ?? 0 }));
              },
            }),
          ),
        );
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
