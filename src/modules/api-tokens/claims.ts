import { AppError } from '../../http/errors.ts';
import { holdsPermission } from '../../lib/permissions.ts';
import type { Queryable } from '../../storage/db.ts';
import { DEFAULT_SETTINGS, type VendorSettings } from '../environment/index.ts';
import type { TokenIssuer } from '../auth/index.ts';
import { permissionKeysByIds, type UserGrantor } from '../roles/index.ts';
import { roleIdsIn } from '../users/index.ts';
import * as store from './store.ts';

/** Who calls a management route: the environment, or a user (possibly a machine token acting as a user). */
export type Caller = { kind: 'vendor' } | (UserGrantor & { machine: boolean });

export const settingsOf = (row: { settings: Record<string, unknown> | null }): VendorSettings => ({
  ...DEFAULT_SETTINGS,
  ...((row.settings ?? {}) as Partial<VendorSettings>),
});

/**
 * Whether a token may still be used: 403 when machine tokens are disabled, 401 when it expired or its user left the
 * account (a removed account's tokens are deleted on account.removed, so they are simply not found).
 */
export function assertUsable(row: store.TokenState, settings: VendorSettings, now = Date.now()): void {
  if (!settings.apiTokensEnabled) throw new AppError('API_TOKENS_DISABLED');
  if (row.expires_at && row.expires_at.getTime() <= now)
    throw new AppError('API_TOKEN_EXPIRED', `The token ${row.id} expired at ${row.expires_at.toISOString()}`);
  if (row.user_id) {
    const expired = row.temporary_expiration_date && row.temporary_expiration_date.getTime() <= now;
    if (!row.member || row.is_disabled || expired)
      throw new AppError(
        'MACHINE_TOKEN_REVOKED',
        `The user of token ${row.id} no longer has access to account ${row.tenant_id}`,
      );
  }
}

/**
 * Roles and permissions a token carries. An account token: its roles, plus its own permissions. A user token: the
 * user's roles in the account (and those role sources such as groups add); its permissions are the user's, narrowed
 * to the token's own list when it has one — never more than the user holds now.
 */
export async function effectiveClaims(
  q: Queryable,
  row: store.LiveTokenRow,
  issue: TokenIssuer,
): Promise<{ roles: string[]; permissions: string[] }> {
  if (!row.user_id)
    return {
      roles: row.role_keys,
      permissions: [...new Set([...row.role_permission_keys, ...row.token_permission_keys])].sort(),
    };
  let roles = row.role_keys;
  let held = row.role_permission_keys;
  const extra = (await issue.extraRoleIds(q, { userId: row.user_id, tenantId: row.tenant_id })).filter(
    (id) => !row.user_role_ids.includes(id),
  );
  if (extra.length) {
    const more = await store.claimsOfRoles(q, extra);
    roles = [...new Set([...roles, ...more.roles])];
    held = [...new Set([...held, ...more.permissions])].sort();
  }
  const permissions =
    row.permission_ids.length > 0 ? row.token_permission_keys.filter((k) => holdsPermission(held, k)) : held;
  return { roles, permissions };
}

/** The permission keys a user holds in an account now (their roles and role sources). */
export async function userPermissions(
  q: Queryable,
  tenantId: string,
  userId: string,
  issue: TokenIssuer,
): Promise<string[]> {
  const own = await roleIdsIn(q, tenantId, userId);
  const ids = [...new Set([...own, ...(await issue.extraRoleIds(q, { userId, tenantId }))])];
  return ids.length ? (await store.claimsOfRoles(q, ids)).permissions : [];
}

/** 400 naming unknown permission ids; 403 when the grantor does not hold one of the keys. Answers the keys. */
export async function checkPermissionIds(q: Queryable, ids: string[], held: string[] | undefined): Promise<string[]> {
  const rows = await permissionKeysByIds(q, ids);
  const unknown = ids.filter((id) => !rows.some((r) => r.id === id));
  if (unknown.length)
    throw new AppError('UNKNOWN_IDS', `permissionIds names permissions that do not exist: ${unknown.join(', ')}`, {
      field: 'permissionIds',
      ids: unknown,
    });
  if (held)
    assertHeld(
      rows.map((r) => r.key),
      held,
      'permissionIds',
    );
  return rows.map((r) => r.key);
}

export function assertHeld(keys: string[], held: string[], field: string): void {
  const missing = keys.filter((k) => !holdsPermission(held, k));
  if (missing.length)
    throw new AppError(
      'TOKEN_PERMISSION_NOT_HELD',
      `${field} grants permissions the caller does not hold: ${missing.join(', ')}`,
      { field, permissions: missing },
    );
}

/** Seconds from now until `at`, at least 1; `fallback` when there is no end. */
export const secondsUntil = (at: Date | null, fallback: number): number =>
  at ? Math.max(1, Math.min(fallback, Math.floor((at.getTime() - Date.now()) / 1000))) : fallback;
