import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';

// ---------------------------------------------------------------------------------------------------------------
// Statement recorder (for --explain): captures the SQL an HTTP request issues through the Db.

export interface Recorded {
  sql: string;
  params: unknown[];
}

export function recordingDb(inner: ClosableDb): {
  db: ClosableDb;
  record: <T>(fn: () => Promise<T>) => Promise<{ result: T; statements: Recorded[] }>;
} {
  let sink: Recorded[] | undefined;
  const wrap = (q: Db): Db => ({
    query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      sink?.push({ sql, params: params ?? [] });
      return q.query<T>(sql, params);
    },
    transaction: (fn) => q.transaction((tx) => fn(wrap(tx))),
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    async record(fn) {
      sink = [];
      try {
        const result = await fn();
        return { result, statements: sink };
      } finally {
        sink = undefined;
      }
    },
  };
}

/** EXPLAIN (ANALYZE, BUFFERS) of one statement; the plan as text lines. */
export async function explainAnalyze(db: Db, s: Recorded): Promise<string[]> {
  const { rows } = await db.query<Record<string, string>>(
    `EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`,
    s.params.length ? s.params : undefined,
  );
  return rows.map((r) => Object.values(r)[0]);
}

// ---------------------------------------------------------------------------------------------------------------
// Statement counter: the exact statements and transactions of one request

export interface CountedCall {
  statements: string[];
  transactions: number;
  raw: { sql: string; params: unknown[] }[];
}

/**
 * The Db wrapped so that the statements of one request (and of the hooks that write after it) can be recorded:
 * `record` waits for the database to be quiet before and after. Exact counts, independent of the machine's load.
 */
export function countingDb(inner: ClosableDb) {
  let sink: CountedCall | undefined;
  let busy = 0;
  let lastActivity = 0;
  const quiet = async () => {
    do await new Promise((r) => setTimeout(r, 25));
    while (busy > 0 || performance.now() - lastActivity < 25);
  };
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      sink?.statements.push(sql.replace(/\s+/g, ' ').trim());
      sink?.raw.push({ sql, params: params ?? [] });
      busy++;
      try {
        return await q.query<T>(sql, params);
      } finally {
        busy--;
        lastActivity = performance.now();
      }
    },
    transaction: (fn) => {
      if (sink) sink.transactions++;
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    async record<T>(fn: () => Promise<T>): Promise<{ result: T; call: CountedCall }> {
      await quiet();
      const call: CountedCall = { statements: [], transactions: 0, raw: [] };
      sink = call;
      try {
        const result = await fn();
        await quiet();
        return { result, call };
      } finally {
        sink = undefined;
      }
    },
  };
}

/** Statements of the audit hook and its chainer. */
export const isAuditSql = (sql: string) => /\baudit_(chain|log|staging)\b/.test(sql);

/** Per recorded call: statements, transactions, round trips (BEGIN/COMMIT count), the audit's share, each text's count. */
export function callStats(calls: CountedCall[]) {
  const n = calls.length;
  const bySql = new Map<string, number>();
  for (const c of calls) for (const s of c.statements) bySql.set(s, (bySql.get(s) ?? 0) + 1);
  const statements = calls.reduce((a, c) => a + c.statements.length, 0) / n;
  const transactions = calls.reduce((a, c) => a + c.transactions, 0) / n;
  const audit = calls.reduce((a, c) => a + c.statements.filter(isAuditSql).length, 0) / n;
  return {
    n,
    statements,
    transactions,
    roundTrips: statements + 2 * transactions,
    audit,
    perCall: [...bySql.entries()].map(([sql, k]) => ({ sql, perCall: k / n })),
  };
}
