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
}

export interface ClosableDb extends Db {
  readonly kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

/** A Db bound to an open transaction: nested `transaction` calls run inside it. */
export function joinedTransaction(q: Queryable): Db {
  const tx: Db = {
    query: (sql, params) => q.query(sql, params),
    transaction: (fn) => fn(tx),
  };
  return tx;
}
