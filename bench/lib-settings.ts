import { resolve } from 'node:path';

/** What every benchmark shares: the store kinds, the repository root, the vendor credentials and a run's options. */

export type StoreKind = 'pglite' | 'postgres';

export const REPO_ROOT = resolve(import.meta.dirname, '..');
export const DEFAULT_BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const BENCH_VENDOR = { clientId: 'bench-client', secret: 'bench-api-key-0123456789abcdef' };
/** Fixed key-encryption key, so a server started later on the same data (cold start) can open the signing keys. */
export const BENCH_ENCRYPTION_KEY = 'bench-encryption-key-0123456789';

export interface BenchOptions {
  store: StoreKind;
  quick: boolean;
  /** EXPLAIN (ANALYZE, BUFFERS) the statements of each measured case into the JSON results. */
  explain: boolean;
  /** Sections to measure (undefined: all); an area documents its section names. */
  only?: string[];
  log: (line: string) => void;
}
