import pino from 'pino';
import { LOG_REDACT } from '../src/context.ts';
import type { ClosableDb } from '../src/storage/db.ts';
import { RAISED_SIGNIN_LIMITS, startBenchApp, type BenchApp, type BenchDb } from './lib.ts';

/** The identity bench's paths, targets and sizes, and its app. */

const AUTH = '/identity/resources/auth/v1';
export const SIGNIN = `${AUTH}/user`;
export const REFRESH = `${AUTH}/user/token/refresh`;
export const GET_USER = '/identity/resources/vendor-only/users/v1';
export const PASSWORD = 'correct horse battery staple';
export const BENCH_ACCOUNT = 'bench-identity';

export const SIGNIN_RATIO_TARGET = 0.85;
export const REFRESH_TARGET: Record<'pglite' | 'postgres', number> = { pglite: 400, postgres: 1000 };

export interface Sizes {
  users: number;
  accounts: number;
  /** Sign-in concurrencies measured (each against raw verifications at the same concurrency). */
  signinConcurrency: number[];
  signinRounds: number;
  signinRoundMs: number;
  signinWarmupMs: number;
  refreshSessions: number;
  refreshMs: number;
  refreshWarmupMs: number;
  signMs: number;
  getUserRequests: number;
  getUserBudgetMs: number;
  getUserConcurrency: number;
  getUserThroughputMs: number;
  /** Sequential requests whose statements are timed (breakdown tables). */
  breakdownRequests: number;
  signinBreakdown: number;
  /** Window of the one-at-a-time sign-in / raw verify comparison. */
  sequentialMs: number;
  profileMs: number;
}

export const FULL: Sizes = {
  users: 100_000,
  accounts: 1000,
  signinConcurrency: [4, 8],
  signinRounds: 2,
  signinRoundMs: 8000,
  signinWarmupMs: 1000,
  // 32 in flight: a refresh waits on two database round trips and on the thread pool (RS256 signing), so fewer
  // closed-loop sessions leave the one server core idle part of the time (same code, PostgreSQL: 77 % busy at 8,
  // 82–86 % at 16, 96 % at 32). Refreshes/s on one core is a capacity figure, measured with that core saturated;
  // p50/p99 are reported with it (docs/performance.md, "Identity"). BENCH_REFRESH_SESSIONS=8 gives the old setting.
  refreshSessions: 32,
  refreshMs: 10_000,
  refreshWarmupMs: 2000,
  signMs: 3000,
  getUserRequests: 3000,
  getUserBudgetMs: 8000,
  getUserConcurrency: 8,
  getUserThroughputMs: 8000,
  breakdownRequests: 300,
  signinBreakdown: 40,
  sequentialMs: 3000,
  profileMs: 3000,
};
export const QUICK: Sizes = {
  users: 5000,
  accounts: 50,
  signinConcurrency: [4],
  signinRounds: 1,
  signinRoundMs: 2000,
  signinWarmupMs: 300,
  refreshSessions: 4,
  refreshMs: 2000,
  refreshWarmupMs: 500,
  signMs: 1000,
  getUserRequests: 300,
  getUserBudgetMs: 2000,
  getUserConcurrency: 4,
  getUserThroughputMs: 2000,
  breakdownRequests: 50,
  signinBreakdown: 10,
  sequentialMs: 1000,
  profileMs: 1000,
};

// ---------------------------------------------------------------------------------------------------------------
// The app with the identity settings: startBenchApp's wiring plus config overrides (rate limits, JWT algorithm).

export type IdentityApp = BenchApp;

export async function startIdentityApp(
  bdb: BenchDb,
  db: ClosableDb,
  env: Record<string, string>,
  logger?: pino.Logger,
): Promise<IdentityApp> {
  // BENCH_IDENTITY_LOG=1: the server's warnings and errors on stderr (to see why a request failed); else /dev/null.
  const log = process.env.BENCH_IDENTITY_LOG
    ? pino({ level: 'warn', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, pino.destination(2))
    : logger;
  // BENCH_IDENTITY_JOBS=1: with the job runner started, as `npm start` runs (the audit chainer's batches and housekeeping
  // then share the CPUs; the statement breakdowns count their statements too).
  return startBenchApp(bdb, db, {
    env: { ...RAISED_SIGNIN_LIMITS, ...env },
    log,
    jobs: process.env.BENCH_IDENTITY_JOBS === '1',
  });
}
