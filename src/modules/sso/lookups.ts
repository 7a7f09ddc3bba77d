import { accountTablesSql } from '../tenants/index.ts';

// What other modules' statements may read of the SSO configurations, as SQL expressions: never a secret.

/** Whether any live account has an enabled SSO connection (boolean): a login box then offers SSO. */
export const SSO_OFFERED_SQL = `EXISTS (SELECT 1 FROM sso_configurations s
  JOIN (${accountTablesSql.liveAccounts}) t ON t.tenant_id = s.tenant_id WHERE s.enabled)`;
