import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';
import { ms, type HttpReply, type Table } from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// Statement timing: a Db wrapper that, while a recording is open, notes every statement with its wall time.

interface Timed {
  sql: string;
  params: unknown[];
  ms: number;
}

export function timingDb(inner: ClosableDb) {
  let sink: Timed[] | undefined;
  let transactions = 0;
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      if (!sink) return q.query<T>(sql, params);
      const out = sink;
      const start = performance.now();
      try {
        return await q.query<T>(sql, params);
      } finally {
        out.push({ sql, params: params ?? [], ms: performance.now() - start });
      }
    },
    transaction: (fn) => {
      if (sink) transactions++;
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: () => inner.close() };
  return {
    db,
    /** Runs `fn` `n` times sequentially and returns what the statements cost per call. */
    async breakdown(n: number, fn: (i: number) => Promise<HttpReply>) {
      const perCall: { statements: number; dbMs: number; httpMs: number }[] = [];
      const bySql = new Map<string, { n: number; ms: number }>();
      let example: Timed[] = [];
      transactions = 0;
      for (let i = 0; i < n; i++) {
        sink = [];
        let reply: HttpReply;
        const got = sink;
        try {
          reply = await fn(i);
        } finally {
          sink = undefined;
        }
        perCall.push({ statements: got.length, dbMs: got.reduce((a, s) => a + s.ms, 0), httpMs: reply.ms });
        for (const s of got) {
          const key = normaliseSql(s.sql);
          const e = bySql.get(key) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += s.ms;
          bySql.set(key, e);
        }
        if (i === n - 1) example = got;
      }
      const mean = (f: (x: (typeof perCall)[number]) => number) =>
        perCall.reduce((a, x) => a + f(x), 0) / (perCall.length || 1);
      return {
        calls: n,
        statementsPerCall: mean((x) => x.statements),
        transactionsPerCall: transactions / n,
        dbMsPerCall: mean((x) => x.dbMs),
        httpMsPerCall: mean((x) => x.httpMs),
        statements: [...bySql.entries()]
          .map(([sql, e]) => ({ sql, perCall: e.n / n, meanMs: e.ms / e.n }))
          .sort((a, b) => b.meanMs * b.perCall - a.meanMs * a.perCall),
        example,
      };
    },
  };
}

const normaliseSql = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 110);

export function statementsTable(
  title: string,
  b: Awaited<ReturnType<ReturnType<typeof timingDb>['breakdown']>>,
  notes: string[] = [],
): Table {
  return {
    title,
    columns: ['statement', 'per call', 'mean ms'],
    rows: b.statements.map((s) => [s.sql, ms(s.perCall, 2), ms(s.meanMs, 3)]),
    notes: [
      `${b.statementsPerCall.toFixed(1)} statements and ${b.transactionsPerCall.toFixed(1)} transactions per call; ${b.dbMsPerCall.toFixed(2)} ms of the ${b.httpMsPerCall.toFixed(2)} ms request (sequential, ${b.calls} calls) is spent waiting on them.`,
      ...notes,
    ],
  };
}
