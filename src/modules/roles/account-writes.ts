import { AppError } from '../../http/errors.ts';
import { holdsPermission } from '../../lib/permissions.ts';
import type { Queryable } from '../../storage/db.ts';
import { grantorLevel, type Grantor, type UserGrantor } from './grants.ts';
import { rolesWithPermissionKeys } from './grants.store.ts';
import type { PermissionRow, RoleRow } from './store.ts';

/**
 * The rule for a user token writing roles (v1 routes and roles/v2 alike): only its own account's roles, never the
 * environment's; only permissions it holds itself (wildcards count) and that are not classified NEVER; never a level
 * above its own (lower numbers rank higher; a caller holding no role, such as an account API token, has no level
 * to compare). An environment token passes every check.
 */

/** May the user put the permission into a role of their account? */
export const grantablePermission = (g: UserGrantor, p: PermissionRow): boolean =>
  p.assignment_type !== 'NEVER' && holdsPermission(g.permissions, p.key);

/** 403 PERMISSION_NOT_GRANTABLE naming the permissions of `rows` a user may not put into a role. */
export function assertPermissionsGrantable(g: Grantor, rows: PermissionRow[], field: string): void {
  if (g.kind === 'vendor') return;
  const refused = rows.filter((p) => !grantablePermission(g, p)).map((p) => p.key);
  if (refused.length === 0) return;
  throw new AppError(
    'PERMISSION_NOT_GRANTABLE',
    `${field} names permissions you do not hold or that account roles may not hold (classified NEVER): ` +
      refused.join(', '),
    { keys: refused },
  );
}

/** 403 ROLE_NOT_GRANTABLE when a user gives a role a level above their own. */
export async function assertLevelWithin(q: Queryable, g: Grantor, level: number | undefined, field: string) {
  if (g.kind === 'vendor' || level === undefined) return;
  const own = await grantorLevel(q, g);
  if (own === null || level >= own) return;
  const message = `${field}: level ${level} ranks above your own level ${own} (lower numbers rank higher)`;
  throw new AppError('ROLE_NOT_GRANTABLE', message, { field });
}

/**
 * May a user change (or delete) this existing role? It must be a role of their account (an environment role is 403
 * ROLE_NOT_EDITABLE; another account's never reaches here, it is 404), every permission it holds must be one they
 * hold, and its level must not be above theirs.
 */
export async function assertRoleEditable(q: Queryable, g: Grantor, row: RoleRow): Promise<void> {
  if (g.kind === 'vendor') return;
  if (row.tenant_id !== g.tenantId) {
    const message = `Role ${row.key} is an environment role: a user token changes only the roles of its own account`;
    throw new AppError('ROLE_NOT_EDITABLE', `${message} (${g.tenantId})`);
  }
  const [granted] = await rolesWithPermissionKeys(q, [row.id]);
  const beyond = (granted?.permission_keys ?? []).filter((k) => !holdsPermission(g.permissions, k));
  if (beyond.length) {
    const message = `Role ${row.key} holds permissions you do not hold: ${beyond.join(', ')}`;
    throw new AppError('ROLE_NOT_GRANTABLE', message, { roleKeys: [row.key] });
  }
  await assertLevelWithin(q, g, row.level, `role ${row.key}`);
}
