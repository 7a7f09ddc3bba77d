// What other modules join of the accounts table, as subqueries (the planner flattens a plain subquery, so the
// join costs what it did, and a walk of the hierarchy keeps its index scans).

/** The live (not deleted) accounts. */
export const LIVE_ACCOUNTS_SQL =
  'SELECT tenant_id, name, parent_tenant_id, sub_account_access_type FROM tenants WHERE deleted_at IS NULL';

/**
 * Every account row, removed ones included (`deleted_at` set), all columns (TenantRow). A walk of the hierarchy
 * keeps `deleted_at IS NULL` next to `parent_tenant_id` in its own join, so the partial index `tenants_parent` fits.
 */
export const ACCOUNTS_SQL = 'SELECT * FROM tenants';
