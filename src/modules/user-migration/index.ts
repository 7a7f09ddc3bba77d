import type { JobHandler } from '../../jobs/runner.ts';
import { idpFetchHandler, IDP_FETCH_JOB, type OutboundOptions } from './idp.ts';
import { USERS_MIGRATION_JOB, type UserMigrationService } from './service.ts';

export { createUserMigrationService, USERS_MIGRATION_JOB, type UserMigrationService } from './service.ts';
export { createApplicationsService, type ApplicationsService } from './applications.ts';
export { userMigrationRoutes } from './routes.ts';
export { IDP_FETCH_JOB, SUPPORTED_PROVIDERS } from './idp.ts';
// The applications tables as subqueries, for other modules' statements that join them (lookups.ts).
export { applicationTablesSql } from './lookups.ts';

/** Job handlers keyed by job kind, for the runner: the bulk import and the provider fetch. */
export function userMigrationJobs(
  service: UserMigrationService,
  kek: Buffer,
  outbound: OutboundOptions,
): Record<string, JobHandler> {
  return { [USERS_MIGRATION_JOB]: service.jobHandler, [IDP_FETCH_JOB]: idpFetchHandler(service, kek, outbound) };
}
