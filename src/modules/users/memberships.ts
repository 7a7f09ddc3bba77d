import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { RolesService } from '../roles/index.ts';
import { accountTablesSql, toAccount, type Account, type TenantRow, type TenantsService } from '../tenants/index.ts';
import { subAccess } from './record.ts';
import * as store from './store.ts';

// A user's memberships of accounts: joining one, and the access they give (for the users service, service.ts).

/** Joins a user to an account with the given roles (or the account's default roles). */
export async function joinAccount(
  tx: Queryable,
  deps: { tenants: TenantsService; roles: RolesService },
  tenantId: string,
  userId: string,
  roleIds: string[] | undefined,
  expiresAt: Date | null,
  firstUser = false,
) {
  const { roles } = deps;
  const account = await deps.tenants.requireLive(tx, tenantId);
  const added = await store.addMembership(tx, tenantId, userId, {
    subAccess: account.sub_account_access_type !== 'defaultOff',
    expiresAt,
  });
  if (!added) throw new AppError('ALREADY_MEMBER', `User ${userId} is already a member of account ${tenantId}`);
  let ids = roleIds ?? [];
  if (ids.length) await roles.assertAssignable(tx, tenantId, ids);
  else ids = firstUser ? await roles.firstUserRoleIds(tx, tenantId) : await roles.defaultRoleIds(tx, tenantId);
  await store.addRoles(tx, tenantId, userId, ids);
}

/**
 * A membership found `distance` levels above the account gives access there unless pending (not accepted by the
 * user), disabled, expired or (above) closed to sub-accounts.
 */
function usable(membership: store.MembershipRow, distance: number): store.MembershipRow | undefined {
  if (membership.pending) return undefined;
  if (distance > 0 && !subAccess(membership)) return undefined;
  if (membership.is_disabled) return undefined;
  if (membership.temporary_expiration_date && membership.temporary_expiration_date <= new Date()) return undefined;
  return membership;
}

/**
 * How a user may act in an account: through their own membership, or through the nearest ancestor membership
 * that has sub-account access. Undefined when neither; disabled or expired memberships give no access.
 */
export async function accessTo(
  q: Queryable,
  userId: string,
  tenantId: string,
): Promise<store.MembershipRow | undefined> {
  const found = await store.nearestMembership(q, userId, tenantId);
  return found ? usable(found.membership, found.distance) : undefined;
}

/**
 * What sign-in and token refresh need of a user's memberships, read with one statement: the live accounts in
 * membership order (a token's `tenantIds`, as `accountsOf` lists them) and an `accessTo` that answers from those
 * rows when the user is a direct member of the (live) account, the usual case, and otherwise walks the ancestors
 * as `accessTo` does. Same answers as `accountsOf` and `accessTo`, without a statement per question.
 */
export async function accessView(q: Queryable, userId: string, rows?: (store.MembershipRow & { live: boolean })[]) {
  // `rows`: the memberships (as membershipsWithState reads them) when the caller read them in a larger statement.
  const live = (rows ?? (await store.membershipsWithState(q, userId))).filter((m) => m.live);
  return {
    tenantIds: live.map((m) => m.tenant_id),
    accessTo: async (tenantId: string): Promise<store.MembershipRow | undefined> => {
      const direct = live.find((m) => m.tenant_id === tenantId);
      if (!direct) return accessTo(q, userId, tenantId);
      const { live: _live, ...membership } = direct;
      return usable(membership, 0);
    },
  };
}

/** The accounts a user belongs to (accepted memberships of live accounts), with names. */
export async function accountsOf(userId: string, q: Queryable): Promise<{ tenantId: string; name: string }[]> {
  const { rows } = await q.query<{ tenant_id: string; name: string }>(
    `SELECT t.tenant_id, t.name FROM user_tenants ut JOIN (${accountTablesSql.accounts}) t ON t.tenant_id = ut.tenant_id
         WHERE ut.user_id = $1 AND t.deleted_at IS NULL AND NOT ut.pending ORDER BY ut.created_at, t.tenant_id`,
    [userId],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, name: r.name }));
}

/** The account records of the accounts a user belongs to, in the order of `accountsOf`. */
export async function accountRecordsOf(userId: string, q: Queryable): Promise<Account[]> {
  const { rows } = await q.query<TenantRow>(
    `SELECT t.* FROM user_tenants ut JOIN (${accountTablesSql.accounts}) t ON t.tenant_id = ut.tenant_id
         WHERE ut.user_id = $1 AND t.deleted_at IS NULL AND NOT ut.pending ORDER BY ut.created_at, t.tenant_id`,
    [userId],
  );
  return rows.map(toAccount);
}
