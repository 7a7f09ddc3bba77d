/** The tenants bench's paths, targets and sizes. */

export const LIST = '/tenants/resources/tenants/v2';
export const HIERARCHY = '/tenants/resources/hierarchy/v1';
export const MIGRATIONS = '/tenants/resources/migrations/v1/tenants';

export const LIST_TARGET_MS = 15;
export const COLD_START_TARGET_MS = 3000;
export const DEPTH = 20;

export interface Sizes {
  accounts: number;
  requests: number;
  /** Wall-time cap per measured case; a case stops early (after minN requests) once it is spent. */
  caseBudgetMs: number;
  minN: number;
  trees: number[];
  migrationBatches: number;
  migrationBatchSize: number;
  coldRuns: number;
}

export const FULL: Sizes = {
  accounts: 100_000,
  requests: 200,
  caseBudgetMs: 6000,
  minN: 40,
  trees: [1000, 10_000],
  migrationBatches: 10,
  migrationBatchSize: 1000,
  coldRuns: 5,
};
export const QUICK: Sizes = {
  accounts: 5000,
  requests: 20,
  caseBudgetMs: 2000,
  minN: 10,
  trees: [200, 1000],
  migrationBatches: 2,
  migrationBatchSize: 100,
  coldRuns: 2,
};
