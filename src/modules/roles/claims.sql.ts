import type { Queryable } from '../../storage/db.ts';
import * as store from './permissions.store.ts';

// The roles module's tables as SQL pieces for statements of other modules (token claims, the IP lockout check), so
// those read role and permission keys within their own statement. `idMatch` is a condition on an id column without
// the column: `= ANY($1::uuid[])`, `IN (SELECT id FROM claim_roles)`.

/**
 * The keys of the roles whose id matches, as an ARRAY in claim order (level, key; `globalFirst`: environment roles
 * before an account's own of the same level and key).
 */
export const roleKeysSql = (idMatch: string, o: { globalFirst?: boolean } = {}): string =>
  `ARRAY(SELECT r.key FROM roles r WHERE r.id ${idMatch}
                ORDER BY r.level, r.key,${o.globalFirst ? ' r.tenant_id NULLS FIRST,' : ''} r.id)`;

/** The distinct permission keys the roles whose id matches hold, as a sorted ARRAY. */
export const rolePermissionKeysSql = (roleIdMatch: string): string =>
  `ARRAY(SELECT DISTINCT p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
               WHERE rp.role_id ${roleIdMatch} ORDER BY p.key)`;

/** The keys of the permissions whose id matches, as a sorted ARRAY. */
export const permissionKeysSql = (idMatch: string): string =>
  `ARRAY(SELECT p.key FROM permissions p WHERE p.id ${idMatch} ORDER BY p.key)`;

/** Every role's permission keys as a subquery: columns role_id, key (one row per role and permission). */
export const ROLE_PERMISSION_KEYS_SQL =
  'SELECT rp.role_id, p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id';

/** Permission ids and keys by id (unknown ids are absent), one statement in the caller's transaction. */
export const permissionKeysByIds = (q: Queryable, ids: string[]) => store.permissionKeysByIds(q, ids);
