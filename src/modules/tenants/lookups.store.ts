// What other modules join of the accounts table, as subqueries (the planner flattens a plain subquery, so the
// join costs what it did).

/** The live (not deleted) accounts. */
export const LIVE_ACCOUNTS_SQL =
  'SELECT tenant_id, name, parent_tenant_id, sub_account_access_type FROM tenants WHERE deleted_at IS NULL';
