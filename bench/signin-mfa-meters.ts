import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import type { ClosableDb, Db, QueryResult } from '../src/storage/db.ts';
import { postgresServer, threadCpuMs } from './loadgen.ts';

// ---------------------------------------------------------------------------------------------------------------
// What a round costs: CPU per flow, statements per flow, and (optionally) a CPU profile

/**
 * CPU per flow in a round: the server process (all threads: event loop, argon2 on the thread pool, PGlite), of which
 * its main thread, and the PostgreSQL server (every backend and background process; 0 on PGlite). Other processes' load does not
 * enter these, so they compare the two flows' cost more steadily than flows/s on a shared machine.
 */
export interface CpuPerFlow {
  server: number;
  main: number;
  database: number;
  /** The client process (separate-process clients only; NaN otherwise). */
  client: number;
}
export async function cpuMeter(db: Db, store: string) {
  // The whole PostgreSQL server's CPU (postgresServer): the pool closes idle connections between rounds, so the
  // backends alive at the start are not the ones that serve a round.
  const server =
    store === 'postgres'
      ? postgresServer(Number((await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid))
      : undefined;
  const read = () => ({ proc: process.cpuUsage(), threads: threadCpuMs(), database: server ? server.cpuMs() : 0 });
  return {
    start: read,
    perFlow(start: ReturnType<typeof read>, flows: number, clientCpuMs = NaN): CpuPerFlow {
      const end = read();
      const proc = (end.proc.user - start.proc.user + end.proc.system - start.proc.system) / 1000;
      const main = start.threads && end.threads ? end.threads.main - start.threads.main : NaN;
      return {
        server: proc / flows,
        main: main / flows,
        database: (end.database - start.database) / flows,
        client: clientCpuMs / flows,
      };
    },
  };
}

/**
 * Counts statements, transactions (each adds a BEGIN and a COMMIT round trip, not counted as statements) and the
 * statements' time (sum of wall times, overlapping under concurrency).
 */
export function countingDb(inner: ClosableDb) {
  const counter = { statements: 0, transactions: 0, ms: 0 };
  // MFA_BENCH_STATEMENTS=1: wall time per statement text (its first words), printed per round (a diagnostic).
  const bySql = process.env.MFA_BENCH_STATEMENTS ? new Map<string, { n: number; ms: number }>() : undefined;
  const wrap = (q: Db): Db => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const start = performance.now();
      try {
        return await q.query<T>(sql, params);
      } finally {
        const took = performance.now() - start;
        counter.statements++;
        counter.ms += took;
        if (bySql) {
          const key = sql.replace(/\s+/g, ' ').slice(0, 70);
          const e = bySql.get(key) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += took;
          bySql.set(key, e);
        }
      }
    },
    transaction: (fn) => {
      counter.transactions++;
      if (!bySql) return q.transaction((tx) => fn(wrap(tx)));
      const start = performance.now();
      return q
        .transaction((tx) => fn(wrap(tx)))
        .finally(() => {
          const e = bySql.get('(transaction, whole)') ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += performance.now() - start;
          bySql.set('(transaction, whole)', e);
        });
    },
  });
  return { db: { ...wrap(inner), kind: inner.kind, close: () => inner.close() } as ClosableDb, counter, bySql };
}

/**
 * With MFA_BENCH_PROFILE_DIR set, each round's main-thread CPU profile is written there as
 * `<store>-<kind>-<round>.cpuprofile` (for finding where the time goes; the figures of a profiled run are not quoted).
 */
export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.MFA_BENCH_PROFILE_DIR;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
