import pg from 'pg';
import { joinedTransaction, markTransaction, outsideTransaction, type ClosableDb, type ListenState } from './db.ts';
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
  const listeners = new Set<() => Promise<void>>();
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
    async listen(channel, onMessage, onState) {
      const stop = await listenOn(opts.url, channel, onMessage, onState);
      const stopOnce = async () => {
        listeners.delete(stopOnce);
        await stop();
      };
      listeners.add(stopOnce);
      return stopOnce;
    },
    async close() {
      await Promise.all([...listeners].map((stop) => stop()));
      await pool.end();
    },
  };
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

/**
 * LISTEN on a dedicated connection (never a pooled one: the pool would hand it to a query and its LISTEN would end with
 * the session). When it errors or ends, it reconnects with backoff (100 ms doubling to 5 s) and says so to `onState`.
 * The first attempt is awaited; if it fails, the retries go on in the background.
 */
async function listenOn(
  url: string,
  channel: string,
  onMessage: (payload: string) => void,
  onState: ListenState,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let delay = BACKOFF_MIN_MS;
  let timer: NodeJS.Timeout | undefined;
  const retry = () => {
    if (stopped) return;
    timer = setTimeout(() => void connect(), delay);
    timer.unref();
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
  };
  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {}); // followed by 'end', handled there
    c.on('notification', (n) => {
      if (n.channel === channel && n.payload !== undefined) onMessage(n.payload);
    });
    c.on('end', () => {
      if (client !== c) return;
      client = undefined;
      onState({ connected: false });
      retry();
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replace(/"/g, '')}"`);
      const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      if (stopped) {
        await c.end();
        return;
      }
      client = c;
      delay = BACKOFF_MIN_MS;
      onState({ connected: true, pid });
    } catch {
      await c.end().catch(() => {});
      retry();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const c = client;
    client = undefined;
    await c?.end().catch(() => {});
  };
}
