/** Shared plumbing of the benchmarks: stores, the app over real HTTP, timing statistics and result tables. */

// Settings and options of a run (store kinds, repository root, vendor credentials)
export * from './lib-settings.ts';
// Result shape and output (tables, machine description)
export * from './lib-results.ts';
// Statistics
export * from './lib-stats.ts';
// Stores: fresh, migrated PGlite or PostgreSQL databases
export * from './lib-stores.ts';
// Statement recorder (--explain) and counter
export * from './lib-statements.ts';
// The app over real HTTP: the keep-alive client and sequential timing
export * from './lib-http.ts';
// The whole API in-process (startBenchApp)
export * from './lib-app.ts';
// Processes: free ports, server cold start, tsx scripts
export * from './lib-processes.ts';
