import type { ClosableDb } from '../src/storage/db.ts';
import { RAISED_SIGNIN_LIMITS, startBenchApp, type BenchDb } from './lib.ts';

/** The migration bench's paths, targets and sizes, and its app. */

export const M = '/identity/resources/migrations/v1';
export const LOGIN = '/identity/resources/auth/v1/user';
export const BULK_TARGET_USERS_PER_S = 5000;
export const ACCEPT_TARGET_MS = 200;
export const PASSWORD = 'Corr3ct horse battery staple! é';

export interface Sizes {
  requests: number;
  perRequest: number;
  accounts: number;
  idleAccepts: number;
  signinUsers: number;
}
export const FULL: Sizes = { requests: 100, perRequest: 1000, accounts: 20, idleAccepts: 10, signinUsers: 10 };
export const QUICK: Sizes = { requests: 5, perRequest: 200, accounts: 4, idleAccepts: 2, signinUsers: 2 };
/** BENCH_MIGRATION_REQUESTS overrides the number of bulk requests (development runs; the figures say so). */
export const requestsOverride = Number(process.env.BENCH_MIGRATION_REQUESTS) || undefined;

// ---------------------------------------------------------------------------------------------------------------
// The app (as startBenchApp, with the sign-in limits raised: every sign-in comes from 127.0.0.1)

export async function startApp(bdb: BenchDb, db: ClosableDb) {
  // BENCH_JOB_CHUNK_SIZE tries another chunk size (users per job transaction) than the default (per store: 1000 on
  // PostgreSQL, 100 on PGlite; see defaultChunkSize in src/modules/user-migration/service.ts).
  const chunk: Record<string, string> = process.env.BENCH_JOB_CHUNK_SIZE
    ? { JOB_CHUNK_SIZE: process.env.BENCH_JOB_CHUNK_SIZE }
    : {};
  const app = await startBenchApp(bdb, db, { jobs: true, env: { ...RAISED_SIGNIN_LIMITS, ...chunk } });
  return { ...app, login: app.newClient() };
}
export type App = Awaited<ReturnType<typeof startApp>>;
