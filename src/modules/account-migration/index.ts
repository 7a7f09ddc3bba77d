// PLACEHOLDER: being implemented.
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../storage/db.ts';
import type { JobHandler, JobRunner } from '../../jobs/runner.ts';
import type { TenantsService } from '../tenants/index.ts';
export function createAccountMigrationService(_deps: { db: Db; jobs: JobRunner; tenants: TenantsService; chunkSize: number }) { return {}; }
export type AccountMigrationService = ReturnType<typeof createAccountMigrationService>;
export function accountMigrationJobs(_s: AccountMigrationService): Record<string, JobHandler> { return {}; }
export const accountMigrationRoutes: FastifyPluginAsync<{ accountMigration: AccountMigrationService }> = async () => {};
