/** SQL for permissions and permission categories (roles are in store.ts, which re-exports this file). */
import { isUuid } from '../../lib/pg-errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { AssignmentType } from './schema.ts';
import { PERMISSION_SELECT, uuids, type CategoryRow, type PermissionRow } from './store.ts';

// -- permissions --

export async function allPermissions(q: Queryable): Promise<PermissionRow[]> {
  const { rows } = await q.query<PermissionRow>(`${PERMISSION_SELECT} ORDER BY p.key`);
  return rows;
}

export async function permissionsByIds(q: Queryable, ids: readonly string[]): Promise<PermissionRow[]> {
  const list = uuids(ids);
  if (list.length === 0) return [];
  const { rows } = await q.query<PermissionRow>(`${PERMISSION_SELECT} WHERE p.id = ANY($1::uuid[]) ORDER BY p.key`, [
    list,
  ]);
  return rows;
}

/** Permission ids and keys by id, no other column (unknown ids are absent). */
export async function permissionKeysByIds(q: Queryable, ids: string[]): Promise<{ id: string; key: string }[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<{ id: string; key: string }>(
    'SELECT id, key FROM permissions WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return rows;
}

export async function findPermission(q: Queryable, id: string): Promise<PermissionRow | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await q.query<PermissionRow>(`${PERMISSION_SELECT} WHERE p.id = $1`, [id]);
  return rows[0];
}

/** Permissions held by any of the roles, each once, in key order. */
export async function permissionsOfRoles(q: Queryable, roleIds: readonly string[]): Promise<PermissionRow[]> {
  const list = uuids(roleIds);
  if (list.length === 0) return [];
  const { rows } = await q.query<PermissionRow>(
    `${PERMISSION_SELECT} WHERE p.id IN (SELECT permission_id FROM role_permissions WHERE role_id = ANY($1::uuid[])) ORDER BY p.key`,
    [list],
  );
  return rows;
}

export async function permissionKeysOfRoles(q: Queryable, roleIds: readonly string[]): Promise<string[]> {
  const list = uuids(roleIds);
  if (list.length === 0) return [];
  const { rows } = await q.query<{ key: string }>(
    `SELECT DISTINCT p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
     WHERE rp.role_id = ANY($1::uuid[]) ORDER BY p.key`,
    [list],
  );
  return rows.map((r) => r.key);
}

export async function takenPermissionKeys(q: Queryable, keys: string[], exceptId?: string): Promise<string[]> {
  const { rows } = await q.query<{ key: string }>(
    'SELECT key FROM permissions WHERE key = ANY($1::text[]) AND id <> $2 ORDER BY key',
    [keys, exceptId ?? '00000000-0000-0000-0000-000000000000'],
  );
  return rows.map((r) => r.key);
}

export interface NewPermission {
  id: string;
  key: string;
  name: string;
  description: string;
  category_id: string | null;
  assignment_type: AssignmentType;
}

/** Inserts permissions in one statement; a key already taken is skipped. Returns the ids written. */
export async function insertPermissions(q: Queryable, rows: NewPermission[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: written } = await q.query<{ id: string }>(
    `INSERT INTO permissions (id, key, name, description, category_id, assignment_type)
     SELECT id, key, name, description, category_id, assignment_type
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, key text, name text, description text, category_id uuid, assignment_type text)
     ON CONFLICT (key) DO NOTHING
     RETURNING id`,
    [JSON.stringify(rows)],
  );
  return new Set(written.map((r) => r.id));
}

export async function updatePermission(q: Queryable, id: string, values: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `${c} = $${i + 2}`);
  await q.query(`UPDATE permissions SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1`, [
    id,
    ...cols.map((c) => values[c]),
  ]);
}

export async function classify(q: Queryable, ids: string[], type: AssignmentType): Promise<void> {
  await q.query('UPDATE permissions SET assignment_type = $2, updated_at = now() WHERE id = ANY($1::uuid[])', [
    ids,
    type,
  ]);
}

export async function deletePermission(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM permissions WHERE id = $1', [id]);
}

/** Roles holding a permission (before it changes), for their `updatedAt`. */
export async function rolesHolding(q: Queryable, permissionId: string): Promise<string[]> {
  const { rows } = await q.query<{ role_id: string }>('SELECT role_id FROM role_permissions WHERE permission_id = $1', [
    permissionId,
  ]);
  return rows.map((r) => r.role_id);
}

// -- categories --

export async function allCategories(q: Queryable): Promise<CategoryRow[]> {
  const { rows } = await q.query<CategoryRow>(
    'SELECT * FROM permission_categories ORDER BY fe_category DESC, lower(name) COLLATE "C", id',
  );
  return rows;
}

export async function findCategory(q: Queryable, id: string): Promise<CategoryRow | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await q.query<CategoryRow>('SELECT * FROM permission_categories WHERE id = $1', [id]);
  return rows[0];
}

export async function existingCategoryIds(q: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const list = uuids(ids);
  if (list.length === 0) return new Set();
  const { rows } = await q.query<{ id: string }>('SELECT id FROM permission_categories WHERE id = ANY($1::uuid[])', [
    list,
  ]);
  return new Set(rows.map((r) => r.id));
}

/** The category holding a name (case-insensitively), other than `exceptId`. */
export async function categoryNamed(q: Queryable, name: string, exceptId?: string): Promise<CategoryRow | undefined> {
  const { rows } = await q.query<CategoryRow>(
    'SELECT * FROM permission_categories WHERE (lower(name) COLLATE "C") = (lower($1) COLLATE "C") AND id <> $2',
    [name, exceptId ?? '00000000-0000-0000-0000-000000000000'],
  );
  return rows[0];
}

/** Inserts a category; undefined when the id or the name is taken. */
export async function insertCategory(
  q: Queryable,
  c: { id: string; name: string; description: string },
): Promise<CategoryRow | undefined> {
  const { rows } = await q.query<CategoryRow>(
    'INSERT INTO permission_categories (id, name, description) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING *',
    [c.id, c.name, c.description],
  );
  return rows[0];
}

export async function updateCategory(
  q: Queryable,
  id: string,
  values: Record<string, unknown>,
): Promise<CategoryRow | undefined> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `${c} = $${i + 2}`);
  const { rows } = await q.query<CategoryRow>(
    `UPDATE permission_categories SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
    [id, ...cols.map((c) => values[c])],
  );
  return rows[0];
}

/** Deletes a category; its permissions stay, without a category. */
export async function deleteCategory(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE permissions SET category_id = NULL, updated_at = now() WHERE category_id = $1', [id]);
  await q.query('DELETE FROM permission_categories WHERE id = $1', [id]);
}
