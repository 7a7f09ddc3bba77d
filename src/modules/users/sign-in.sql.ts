import { sql, type Param, type Sql } from '../../storage/sql.ts';

/**
 * A sign-in recorded on the user, as the WITH item `signed_in` of the statement that starts the sign-in (auth): the
 * failed attempts reset, the last login and the active account set. The user's row and its rules stay owned here.
 */
export const recordSignInItem = (a: { userId: Param | string; tenantId: Param | string; at: Date }): Sql =>
  sql`signed_in AS (UPDATE users
                    SET failed_attempts = 0, last_login = ${a.at}, active_tenant_id = ${a.tenantId}, updated_at = now()
                     WHERE id = ${a.userId})`;
