import type { Queryable } from '../../storage/db.ts';

export interface GroupRow {
  tenant_id: string;
  id: string;
  name: string;
  color: string;
  description: string;
  metadata: Record<string, unknown>;
  managed_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface GroupUserRow {
  group_id: string;
  id: string;
  email: string | null;
  name: string;
  profile_picture_url: string | null;
  created_at: Date;
  last_login: Date | null;
  joined_at: Date;
}

export async function insertGroup(
  q: Queryable,
  g: Pick<GroupRow, 'tenant_id' | 'id' | 'name' | 'color' | 'description' | 'metadata'>,
): Promise<GroupRow> {
  const { rows } = await q.query<GroupRow>(
    `INSERT INTO user_groups (tenant_id, id, name, color, description, metadata) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [g.tenant_id, g.id, g.name, g.color, g.description, JSON.stringify(g.metadata)],
  );
  return rows[0];
}

export async function findGroup(
  q: Queryable,
  tenantId: string,
  id: string,
  lock = false,
): Promise<GroupRow | undefined> {
  const { rows } = await q.query<GroupRow>(
    `SELECT * FROM user_groups WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, id],
  );
  return rows[0];
}

export async function groupsByIds(q: Queryable, tenantId: string, ids: string[]): Promise<GroupRow[]> {
  const { rows } = await q.query<GroupRow>(
    `SELECT * FROM user_groups WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY lower(name) COLLATE "C", id`,
    [tenantId, ids],
  );
  return rows;
}

const SORT = { id: 'id', name: '(lower(name) COLLATE "C")', createdAt: 'created_at', updatedAt: 'updated_at' } as const;
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Groups of an account, all (no limit) or one page; ties end on id. */
export async function listGroups(
  q: Queryable,
  tenantId: string,
  p: { limit?: number; page?: number; sortBy?: keyof typeof SORT; order?: 'ASC' | 'DESC'; filter?: string } = {},
): Promise<{ rows: GroupRow[]; total: number }> {
  const params: unknown[] = [tenantId];
  let where = 'tenant_id = $1';
  if (p.filter) {
    params.push(`%${escapeLike(p.filter.toLowerCase())}%`);
    where += ` AND lower(name) LIKE $${params.length}`;
  }
  const order = p.order ?? 'ASC';
  const paging = p.limit !== undefined ? ` LIMIT ${p.limit} OFFSET ${(p.page ?? 0) * p.limit}` : '';
  const { rows } = await q.query<GroupRow>(
    `SELECT * FROM user_groups WHERE ${where} ORDER BY ${SORT[p.sortBy ?? 'name']} ${order}, id ${order}${paging}`,
    params,
  );
  if (p.limit === undefined) return { rows, total: rows.length };
  const { rows: c } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM user_groups WHERE ${where}`, params);
  return { rows, total: c[0].n };
}

export async function updateGroup(
  q: Queryable,
  tenantId: string,
  id: string,
  values: Record<string, unknown>,
): Promise<GroupRow | undefined> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `${c} = $${i + 3}`);
  const { rows } = await q.query<GroupRow>(
    `UPDATE user_groups SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    [tenantId, id, ...cols.map((c) => (c === 'metadata' ? JSON.stringify(values[c]) : values[c]))],
  );
  return rows[0];
}

export const touchGroup = (q: Queryable, tenantId: string, id: string) =>
  q.query('UPDATE user_groups SET updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenantId, id]);

export async function deleteGroup(q: Queryable, tenantId: string, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM user_groups WHERE tenant_id = $1 AND id = $2', [tenantId, id])).rowCount > 0;
}

/** Removes every group of an account (members and role links go with them). */
export async function deleteAccountGroups(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM user_groups WHERE tenant_id = $1', [tenantId]);
}

export async function addUsers(q: Queryable, tenantId: string, groupId: string, userIds: string[]): Promise<number> {
  const r = await q.query(
    `INSERT INTO group_users (tenant_id, group_id, user_id) SELECT $1, $2, u FROM unnest($3::uuid[]) AS u ON CONFLICT DO NOTHING`,
    [tenantId, groupId, userIds],
  );
  return r.rowCount;
}

export async function removeUsers(q: Queryable, tenantId: string, groupId: string, userIds: string[]): Promise<number> {
  return (
    await q.query('DELETE FROM group_users WHERE tenant_id = $1 AND group_id = $2 AND user_id = ANY($3::uuid[])', [
      tenantId,
      groupId,
      userIds,
    ])
  ).rowCount;
}

export async function addRoles(q: Queryable, tenantId: string, groupId: string, roleIds: string[]): Promise<number> {
  const r = await q.query(
    `INSERT INTO group_roles (tenant_id, group_id, role_id) SELECT $1, $2, r FROM unnest($3::uuid[]) AS r ON CONFLICT DO NOTHING`,
    [tenantId, groupId, roleIds],
  );
  return r.rowCount;
}

export async function removeRoles(q: Queryable, tenantId: string, groupId: string, roleIds: string[]): Promise<number> {
  return (
    await q.query('DELETE FROM group_roles WHERE tenant_id = $1 AND group_id = $2 AND role_id = ANY($3::uuid[])', [
      tenantId,
      groupId,
      roleIds,
    ])
  ).rowCount;
}

/**
 * The users module's tables as subqueries (its `userTablesSql`), given by the wiring: the users module imports this
 * one. Joined inside this module's statements, so a read stays one statement.
 */
export interface UserTablesSql {
  users: string;
  liveMemberships: string;
}

/** Members of several groups in one statement, by email. */
export async function usersOfGroups(
  q: Queryable,
  sql: UserTablesSql,
  tenantId: string,
  groupIds: string[],
): Promise<GroupUserRow[]> {
  const { rows } = await q.query<GroupUserRow>(
    `SELECT gu.group_id, u.id, u.email, u.name, u.profile_picture_url, u.created_at, u.last_login, gu.created_at AS joined_at
     FROM group_users gu JOIN (${sql.users}) u ON u.id = gu.user_id
     WHERE gu.tenant_id = $1 AND gu.group_id = ANY($2::uuid[]) ORDER BY u.email, u.id`,
    [tenantId, groupIds],
  );
  return rows;
}

/** Role ids of several groups in one statement. */
export async function roleIdsOfGroups(
  q: Queryable,
  tenantId: string,
  groupIds: string[],
): Promise<{ group_id: string; role_id: string }[]> {
  const { rows } = await q.query<{ group_id: string; role_id: string }>(
    'SELECT group_id, role_id FROM group_roles WHERE tenant_id = $1 AND group_id = ANY($2::uuid[])',
    [tenantId, groupIds],
  );
  return rows;
}

/**
 * The role ids a user receives through their groups in an account, in one statement; none while groups or group
 * roles are switched off for the environment.
 */
export async function groupRoleIdsOf(q: Queryable, tenantId: string, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ role_id: string }>(
    `SELECT DISTINCT ${GROUP_ROLE_IDS_SQL.slice('SELECT '.length)}`
      .replaceAll('{tenant}', '$1')
      .replaceAll('{user}', '$2'),
    [tenantId, userId],
  );
  return rows.map((r) => r.role_id);
}

/**
 * `groupRoleIdsOf` as a query for the token issuer's claims statement (RoleSource.sql): `{tenant}` and `{user}` stand
 * for the account and the user, so sign-in and refresh read group roles within the statement that computes the claims.
 */
export const GROUP_ROLE_IDS_SQL = `SELECT gr.role_id FROM group_users gu
     JOIN group_roles gr ON gr.tenant_id = gu.tenant_id AND gr.group_id = gu.group_id
     WHERE gu.tenant_id = {tenant} AND gu.user_id = {user}
       AND NOT EXISTS (SELECT 1 FROM group_config c WHERE NOT c.enabled OR NOT c.roles_enabled)`;

/** The groups of several users (every account), one statement; for the User record. */
export async function groupsOfUsers(q: Queryable, userIds: string[]): Promise<(GroupRow & { user_id: string })[]> {
  const { rows } = await q.query<GroupRow & { user_id: string }>(
    `SELECT gu.user_id, g.* FROM group_users gu JOIN user_groups g ON g.tenant_id = gu.tenant_id AND g.id = gu.group_id
     WHERE gu.user_id = ANY($1::uuid[]) ORDER BY lower(g.name) COLLATE "C", g.id`,
    [userIds],
  );
  return rows;
}

export async function readConfig(q: Queryable): Promise<{ enabled: boolean; rolesEnabled: boolean }> {
  const { rows } = await q.query<{ enabled: boolean; roles_enabled: boolean }>(
    'SELECT enabled, roles_enabled FROM group_config',
  );
  return { enabled: rows[0]?.enabled ?? true, rolesEnabled: rows[0]?.roles_enabled ?? true };
}

export async function writeConfig(q: Queryable, c: { enabled: boolean; rolesEnabled: boolean }): Promise<void> {
  await q.query(
    `INSERT INTO group_config (singleton, enabled, roles_enabled) VALUES (true, $1, $2)
     ON CONFLICT (singleton) DO UPDATE SET enabled = excluded.enabled, roles_enabled = excluded.roles_enabled, updated_at = now()`,
    [c.enabled, c.rolesEnabled],
  );
}
