import { isUuid } from '../../lib/pg-errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { AssignmentType, RoleSortKey } from './schema.ts';

export interface RoleRow {
  id: string;
  tenant_id: string | null;
  key: string;
  name: string;
  description: string;
  is_default: boolean;
  first_user_role: boolean;
  level: number;
  created_at: Date;
  updated_at: Date;
  permissions: string[];
}

export interface PermissionRow {
  id: string;
  key: string;
  name: string;
  description: string;
  category_id: string | null;
  assignment_type: AssignmentType;
  fe_permission: boolean;
  created_at: Date;
  updated_at: Date;
  role_ids: string[];
}

export interface CategoryRow {
  id: string;
  name: string;
  description: string;
  fe_category: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Only uuid-shaped strings reach a uuid column; anything else cannot name a row. */
export { isUuid };
export const uuids = (ids: readonly string[]): string[] => [...new Set(ids.filter(isUuid).map((s) => s.toLowerCase()))];

/** A role with the ids of its permissions (in permission-key order). */
const ROLE_SELECT = `SELECT r.*, ARRAY(
    SELECT p.id::text FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
    WHERE rp.role_id = r.id ORDER BY p.key) AS permissions
  FROM roles r`;

/** A permission with the ids of the roles that hold it. */
export const PERMISSION_SELECT = `SELECT p.*, ARRAY(
    SELECT rp.role_id::text FROM role_permissions rp WHERE rp.permission_id = p.id ORDER BY rp.role_id) AS role_ids
  FROM permissions p`;

/** Environment roles, plus those of one account when `tenantId` is given. */
const scopeSql = (param: string) => `(r.tenant_id IS NULL OR r.tenant_id = ${param})`;

// -- roles --

export async function rolesInScope(q: Queryable, tenantId: string | undefined): Promise<RoleRow[]> {
  const { rows } = await q.query<RoleRow>(
    `${ROLE_SELECT} WHERE ${tenantId === undefined ? 'r.tenant_id IS NULL' : scopeSql('$1')} ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id`,
    tenantId === undefined ? [] : [tenantId],
  );
  return rows;
}

export async function rolesByIds(q: Queryable, ids: readonly string[]): Promise<RoleRow[]> {
  const list = uuids(ids);
  if (list.length === 0) return [];
  const { rows } = await q.query<RoleRow>(
    `${ROLE_SELECT} WHERE r.id = ANY($1::uuid[]) ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id`,
    [list],
  );
  return rows;
}

export async function findRole(q: Queryable, id: string, lock = false): Promise<RoleRow | undefined> {
  if (!isUuid(id)) return undefined;
  if (lock) await q.query('SELECT id FROM roles WHERE id = $1 FOR UPDATE', [id]);
  const { rows } = await q.query<RoleRow>(`${ROLE_SELECT} WHERE r.id = $1`, [id]);
  return rows[0];
}

/** Ids of the roles of a scope with a flag set, in level and key order. */
/** The ids (column `id`) of an account's flagged roles, in order, for the account `tenantExpr` (a parameter or column). */
export const flaggedRoleIdsSql = (tenantExpr: string, flag: 'is_default' | 'first_user_role') =>
  `SELECT r.id FROM roles r WHERE ${scopeSql(tenantExpr)} AND r.${flag} ORDER BY r.level, r.key, r.tenant_id NULLS FIRST`;

export async function flaggedRoleIds(
  q: Queryable,
  tenantId: string,
  flag: 'is_default' | 'first_user_role',
): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(flaggedRoleIdsSql('$1', flag), [tenantId]);
  return rows.map((r) => r.id);
}

/** The ids of the roles of the account's scope whose key is among `keys`, in id order. */
export async function idsByKeys(q: Queryable, tenantId: string, keys: string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    'SELECT id::text FROM roles WHERE key = ANY($2::text[]) AND (tenant_id IS NULL OR tenant_id = $1) ORDER BY id',
    [tenantId, keys],
  );
  return rows.map((r) => r.id);
}

/** The ids among `roleIds` that still name a role of the account's scope (environment roles or its own). */
export async function idsInScope(q: Queryable, tenantId: string, roleIds: string[]): Promise<string[]> {
  if (roleIds.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    'SELECT id::text AS id FROM roles WHERE id::text = ANY($1::text[]) AND (tenant_id IS NULL OR tenant_id = $2)',
    [roleIds, tenantId],
  );
  return rows.map((r) => r.id);
}

export interface NewRole {
  id: string;
  tenant_id: string | null;
  key: string;
  name: string;
  description: string;
  is_default: boolean;
  first_user_role: boolean;
  level: number;
}

/** Inserts roles in one statement; a key taken in its scope is skipped. Returns the ids written. */
export async function insertRoles(q: Queryable, roles: NewRole[]): Promise<Set<string>> {
  if (roles.length === 0) return new Set();
  const { rows } = await q.query<{ id: string }>(
    `INSERT INTO roles (id, tenant_id, key, name, description, is_default, first_user_role, level)
     SELECT id, tenant_id, key, name, description, is_default, first_user_role, level
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, tenant_id text, key text, name text, description text, is_default boolean, first_user_role boolean, level integer)
     ON CONFLICT ((coalesce(tenant_id, '')), key) DO NOTHING
     RETURNING id`,
    [JSON.stringify(roles)],
  );
  return new Set(rows.map((r) => r.id));
}

/** Keys among `keys` already taken in a scope (null: the environment). */
export async function takenRoleKeys(
  q: Queryable,
  tenantId: string | null,
  keys: string[],
  exceptId?: string,
): Promise<string[]> {
  const { rows } = await q.query<{ key: string }>(
    `SELECT key FROM roles WHERE coalesce(tenant_id, '') = $1 AND key = ANY($2::text[]) AND id <> $3 ORDER BY key`,
    [tenantId ?? '', keys, exceptId ?? '00000000-0000-0000-0000-000000000000'],
  );
  return rows.map((r) => r.key);
}

export async function updateRole(q: Queryable, id: string, values: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `${c} = $${i + 2}`);
  await q.query(`UPDATE roles SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1`, [
    id,
    ...cols.map((c) => values[c]),
  ]);
}

export async function deleteRole(q: Queryable, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const r = await q.query('DELETE FROM roles WHERE id = $1', [id]);
  return r.rowCount > 0;
}

/** Removes every role of an account (their permission links and user assignments go with them). */
export async function deleteAccountRoles(q: Queryable, tenantId: string): Promise<number> {
  const r = await q.query('DELETE FROM roles WHERE tenant_id = $1', [tenantId]);
  return r.rowCount;
}

export async function touchRoles(q: Queryable, ids: string[]): Promise<void> {
  if (ids.length) await q.query('UPDATE roles SET updated_at = now() WHERE id = ANY($1::uuid[])', [ids]);
}

/** Replaces the permissions of a role. */
export async function setRolePermissions(q: Queryable, roleId: string, permissionIds: string[]): Promise<void> {
  await q.query('DELETE FROM role_permissions WHERE role_id = $1 AND NOT (permission_id = ANY($2::uuid[]))', [
    roleId,
    permissionIds,
  ]);
  await addRolePermissions(q, [roleId], permissionIds);
}

export async function addRolePermissions(q: Queryable, roleIds: string[], permissionIds: string[]): Promise<void> {
  if (roleIds.length === 0 || permissionIds.length === 0) return;
  await q.query(
    `INSERT INTO role_permissions (role_id, permission_id)
     SELECT r, p FROM unnest($1::uuid[]) AS r CROSS JOIN unnest($2::uuid[]) AS p
     ON CONFLICT DO NOTHING`,
    [roleIds, permissionIds],
  );
}

/**
 * Makes `roleIds` exactly the roles holding a permission (among the roles of account `tenantId` only, when given);
 * returns the roles whose set changed.
 */
export async function setPermissionRoles(
  q: Queryable,
  permissionId: string,
  roleIds: string[],
  tenantId?: string,
): Promise<string[]> {
  const { rows: removed } = await q.query<{ role_id: string }>(
    `DELETE FROM role_permissions WHERE permission_id = $1 AND NOT (role_id = ANY($2::uuid[]))
     ${tenantId === undefined ? '' : 'AND role_id IN (SELECT id FROM roles WHERE tenant_id = $3)'} RETURNING role_id`,
    tenantId === undefined ? [permissionId, roleIds] : [permissionId, roleIds, tenantId],
  );
  const { rows: added } = await q.query<{ role_id: string }>(
    `INSERT INTO role_permissions (role_id, permission_id) SELECT r, $1 FROM unnest($2::uuid[]) AS r
     ON CONFLICT DO NOTHING RETURNING role_id`,
    [permissionId, roleIds],
  );
  return [...removed, ...added].map((r) => r.role_id);
}

export interface ListParams {
  tenantId?: string;
  limit: number;
  page: number;
  filter?: string;
  sortBy: RoleSortKey;
  order: 'ASC' | 'DESC';
}

const SORT_SQL: Record<RoleSortKey, string> = {
  key: 'r.key',
  name: '(lower(r.name) COLLATE "C")',
  description: '(lower(r.description) COLLATE "C")',
  isDefault: 'r.is_default',
  firstUserRole: 'r.first_user_role',
  level: 'r.level',
  updatedAt: 'r.updated_at',
  createdAt: 'r.created_at',
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One page of the roles of a scope and the total. Ties end on key, then environment before account, then id. */
export async function listRoles(q: Queryable, p: ListParams): Promise<{ rows: RoleRow[]; total: number }> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (p.tenantId === undefined) where.push('r.tenant_id IS NULL');
  else {
    params.push(p.tenantId);
    where.push(scopeSql(`$${params.length}`));
  }
  if (p.filter) {
    params.push(`%${escapeLike(p.filter.toLowerCase())}%`);
    where.push(`(lower(r.key) LIKE $${params.length} OR lower(r.name) LIKE $${params.length})`);
  }
  const whereSql = where.join(' AND ');
  const { rows: count } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM roles r WHERE ${whereSql}`,
    params,
  );
  const total = count[0].n;
  const offset = p.page * p.limit;
  if (offset >= total) return { rows: [], total };
  const tie = p.sortBy === 'key' ? [] : ['r.key'];
  const order = [
    `${SORT_SQL[p.sortBy]} ${p.order}`,
    ...tie.map((c) => `${c} ${p.order}`),
    `r.tenant_id ${p.order} NULLS FIRST`,
    `r.id ${p.order}`,
  ].join(', ');
  const { rows } = await q.query<RoleRow>(
    `${ROLE_SELECT} WHERE ${whereSql} ORDER BY ${order} LIMIT ${p.limit} OFFSET ${offset}`,
    params,
  );
  return { rows, total };
}

export async function distinctLevels(q: Queryable, tenantId: string | undefined): Promise<number[]> {
  const { rows } = await q.query<{ level: number }>(
    `SELECT DISTINCT r.level FROM roles r WHERE ${tenantId === undefined ? 'r.tenant_id IS NULL' : scopeSql('$1')} ORDER BY r.level`,
    tenantId === undefined ? [] : [tenantId],
  );
  return rows.map((r) => r.level);
}

export async function distinctTenants(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ tenant_id: string }>(
    'SELECT DISTINCT tenant_id FROM roles WHERE tenant_id IS NOT NULL ORDER BY tenant_id',
  );
  return rows.map((r) => r.tenant_id);
}

export * from './permissions.store.ts';
