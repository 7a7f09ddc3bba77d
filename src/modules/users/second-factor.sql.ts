import { sql, type Sql } from '../../storage/sql.ts';
import { accountTablesSql } from '../tenants/index.ts';

// The users module's parts of the MFA sign-in statements (mfa/signin-store.ts, mfa/store.ts), which read the pending
// sign-in, its user and their memberships in one round trip.

/** Every column of the user row (as `UserRow` holds it), as a subquery to join: `JOIN (${userRowsSql}) u ON …`. */
export const userRowsSql = 'SELECT * FROM users';

/**
 * A query answering one row while what an MFA verify judged on a snapshot still holds: the user row is still the
 * version `version` (xmin), and the membership in the account is still usable (accepted, not disabled, not expired,
 * the account not removed) with exactly the roles `roleIds`. `userId` must be a uuid.
 */
export function snapshotHoldsSql(s: { userId: string; version: string; tenantId: string; roleIds: string[] }): Sql {
  const tenant = sql.param(s.tenantId);
  const accounts = sql.raw(accountTablesSql.liveAccounts);
  return sql`SELECT 1 FROM users u
     WHERE u.id = ${s.userId}::uuid AND u.xmin::text = ${s.version}::text
       AND EXISTS (SELECT 1 FROM user_tenants ut JOIN (${accounts}) t ON t.tenant_id = ut.tenant_id
                    WHERE ut.user_id = u.id AND ut.tenant_id = ${tenant}::text AND NOT ut.is_disabled AND NOT ut.pending
                      AND (ut.temporary_expiration_date IS NULL OR ut.temporary_expiration_date > now()))
       AND ARRAY(SELECT ur.role_id FROM user_roles ur
                  WHERE ur.user_id = u.id AND ur.tenant_id = ${tenant}::text ORDER BY 1)
           = ARRAY(SELECT DISTINCT unnest(${s.roleIds}::uuid[]) ORDER BY 1)`;
}
