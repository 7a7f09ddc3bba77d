import type { Queryable } from '../../storage/db.ts';
import { uuids } from './store.ts';

export interface GrantedRoleRow {
  id: string;
  tenant_id: string | null;
  key: string;
  level: number;
  permission_keys: string[];
}

/** Roles by id with the keys of their permissions; unknown or malformed ids are skipped. One statement. */
export async function rolesWithPermissionKeys(q: Queryable, ids: readonly string[]): Promise<GrantedRoleRow[]> {
  const list = uuids(ids);
  if (list.length === 0) return [];
  const { rows } = await q.query<GrantedRoleRow>(
    `SELECT r.id::text AS id, r.tenant_id, r.key, r.level, ARRAY(
        SELECT p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
         WHERE rp.role_id = r.id ORDER BY p.key) AS permission_keys
       FROM roles r WHERE r.id = ANY($1::uuid[]) ORDER BY r.level, r.key`,
    [list],
  );
  return rows;
}

/**
 * The most privileged level (lowest number) among the role keys a token carries in its account: environment roles
 * and the account's own. A key both scopes use counts with the less privileged of the two (the token names keys, not
 * ids). Null when no key names a role.
 */
export async function bestLevelOfKeys(q: Queryable, tenantId: string, keys: readonly string[]): Promise<number | null> {
  if (keys.length === 0) return null;
  const { rows } = await q.query<{ level: number | null }>(
    `SELECT min(k.level) AS level FROM (
        SELECT max(r.level) AS level FROM roles r
         WHERE r.key = ANY($1::text[]) AND (r.tenant_id IS NULL OR r.tenant_id = $2)
         GROUP BY r.key) k`,
    [[...keys], tenantId],
  );
  return rows[0]?.level ?? null;
}
