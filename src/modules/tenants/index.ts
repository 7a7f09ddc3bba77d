export {
  createTenantsService,
  toAccount,
  parseMetadata,
  toColumns,
  type TenantsService,
} from './service.ts';
export { tenantsRoutes } from './routes.ts';
export type { NewTenant, TenantRow } from './rows.ts';
export { Account, AccessType, CreateAccount, TenantId, TenantParams, AccountFields } from './schema.ts';
// What other modules read and write of the accounts table (lookups.ts): subqueries their statements join in one
// round trip, and statements on one account that run in their transaction.
export { accountTablesSql, liveAccount, setLiveColumns } from './lookups.ts';
