import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The one storage interface every module speaks. Two methods, plain SQL with `$1` parameters.
 * Implementations: PGlite (embedded, one session, statements serialised) and `pg` (pooled).
 * Both return timestamps as Date, int8 as number and jsonb as parsed values.
 */
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}

export interface Db extends Queryable {
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. Nested calls join the outer one. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * LISTENs on `channel` (both stores; absent on a transaction's handle and on wrappers): `onMessage` gets each
   * payload NOTIFYed on it after its transaction committed. `onState` tells when the listening connection is up or
   * down (PostgreSQL: a dedicated connection that reconnects with backoff). Answers the function that stops it.
   */
  listen?(channel: string, onMessage: (payload: string) => void, onState: ListenState): Promise<() => Promise<void>>;
}

/** Whether notifications arrive now; `pid` is the listening backend's (PostgreSQL), for operators and tests. */
export type ListenState = (state: { connected: boolean; pid?: number }) => void;

export interface ClosableDb extends Db {
  readonly kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

const inTransaction = new AsyncLocalStorage<true>();

/**
 * Runs `fn` marked as inside a transaction. A statement sent to the pool-level Db from inside one is a bug: on
 * PGlite (one session) it waits for the transaction forever; on PostgreSQL it cannot see the transaction's writes.
 * `outsideTransaction()` turns that into an immediate error naming the mistake.
 */
export const markTransaction = <T>(fn: () => Promise<T>): Promise<T> => inTransaction.run(true, fn);

export function outsideTransaction(sql: string): void {
  if (inTransaction.getStore()) {
    throw new Error(
      `query on the top-level Db inside a transaction (use the transaction's handle): ${sql.slice(0, 80)}`,
    );
  }
}

/** A Db bound to an open transaction: nested `transaction` calls run inside it. */
export function joinedTransaction(q: Queryable): Db {
  const tx: Db = {
    query: (sql, params) => q.query(sql, params),
    transaction: (fn) => fn(tx),
  };
  return tx;
}
