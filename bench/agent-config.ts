/** The agent bench's targets and the sizes of its small and large snapshots. */

export const CONNECTIONS = 50;
export const THROUGHPUT_RATIO_TARGET = 0.8;
export const RSS_TARGET_MB = 200;
export const LOAD_TARGET_MS = 1000;
export const UNCHANGED_RATIO = 0.9;
export const PROPAGATION_TARGET_MS = 2000;
export const QUIET_LOAD = 1.2;

export interface Sizes {
  accounts: number;
  features: number;
  plans: number;
  grants: number;
  flags: number;
  routes: number;
}
export const SMALL: Sizes = { accounts: 200, features: 20, plans: 5, grants: 1000, flags: 5, routes: 30 };
export const LARGE: Sizes = { accounts: 10_000, features: 100, plans: 20, grants: 50_000, flags: 10, routes: 60 };
export const LARGE_QUICK: Sizes = { accounts: 1000, features: 30, plans: 8, grants: 5000, flags: 5, routes: 30 };
