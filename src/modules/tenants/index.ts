export { createTenantsService, toAccount, parseMetadata, toColumns, type TenantsService, type AccountRemovalHook, type AccountCreationHook } from './service.ts';
export { tenantsRoutes } from './routes.ts';
export { aliasHolders, insertAccounts, liveAccountsSql, liveIds, type NewTenant, type TenantRow } from './store.ts';
export { Account, AccessType, CreateAccount, TenantId, TenantParams, AccountFields } from './schema.ts';
