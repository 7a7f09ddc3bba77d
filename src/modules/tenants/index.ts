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
// The accounts table as subqueries, for other modules' statements that join it in one round trip (lookups.ts).
export { accountTablesSql } from './lookups.ts';
