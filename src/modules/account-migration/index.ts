export {
  createAccountMigrationService,
  accountMigrationJobs,
  describeItemErrors,
  TENANTS_MIGRATION_JOB,
  type AccountMigrationService,
} from './service.ts';
export { accountMigrationRoutes } from './routes.ts';
// The kind-neutral parts, for the user migration to reuse.
export {
  createMigrationEngine,
  toMigrationStatus,
  type ChunkItem,
  type ChunkProcessor,
  type ErrorKey,
  type ItemError,
  type MigrationSpec,
  type MigrationStatus,
  type StatusItemError,
} from './engine.ts';
export {
  MAX_MIGRATION_ITEMS,
  MigrationCreated,
  MigrationParams,
  MigrationState,
  migrationStatusSchema,
} from './schema.ts';
// For a migration whose items are fetched first (the user migration from an identity provider): its row's statements.
export { insertEmptyMigration, fillMigration, failMigration, migrationFailure } from './prefill.ts';
