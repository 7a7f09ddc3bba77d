import type { Queryable } from '../../../storage/db.ts';
import type { SqlParams } from './filter.ts';

/** SQL of the directory's users, groups and memberships; every statement is scoped by (tenant, connection). */

export interface ScimUserRow {
  tenant_id: string;
  connection_id: string;
  id: string;
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  email: string | null;
  active: boolean;
  data: Record<string, unknown>;
  version: number;
  user_id: string | null;
  owns_user: boolean;
  granted_role_ids: string[];
  created_at: Date;
  updated_at: Date;
}

export interface ScimGroupRow {
  tenant_id: string;
  connection_id: string;
  id: string;
  display_name: string;
  external_id: string | null;
  data: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface Scope {
  tenantId: string;
  connectionId: string;
}

export interface UserColumns {
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  email: string | null;
  active: boolean;
  data: Record<string, unknown>;
}

/** What a create checks against the connection row in the statement that inserts (see insertUserChecked). */
export interface ConnectionCheck {
  tokenHash: string;
  sync: boolean;
  groupRoles: unknown[];
}

export type CheckedInsert =
  | { kind: 'inserted'; row: ScimUserRow }
  /** The connection is gone or its token is no longer the caller's. */
  | { kind: 'revoked' }
  /** The connection's settings are not the ones the caller acted on: these are the current ones. */
  | { kind: 'stale'; sync: boolean; groupRoles: unknown[] };

/**
 * Inserts a directory user (already linked to its Gatehouse user when `link` is given) in one statement that also
 * re-checks the connection row: still there, the caller's token still its token, and the settings the caller acted on
 * (syncToUserManagement, group mapping) still its settings. The row is read FOR KEY SHARE (the lock the foreign key
 * takes anyway), so a concurrent settings change either committed before (and is seen: `stale`) or waits for this
 * transaction. Nothing is inserted unless every check holds.
 */
export async function insertUserChecked(
  q: Queryable,
  s: Scope,
  id: string,
  c: UserColumns,
  link: { userId: string; owns: boolean } | undefined,
  check: ConnectionCheck,
): Promise<CheckedInsert> {
  const { rows } = await q.query<ScimUserRow & { c_token_ok: boolean; c_sync: boolean; c_group_roles: unknown[] }>(
    `WITH c AS (SELECT token_hash, sync_to_user_management, group_roles FROM scim_connections WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE),
     ins AS (
       INSERT INTO scim_users (tenant_id, connection_id, id, user_name, external_id, display_name, email, active, data, user_id, owns_user)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM c
       WHERE c.token_hash = $12 AND c.sync_to_user_management = $13 AND c.group_roles = $14::jsonb
       RETURNING *)
     SELECT ins.*, c.token_hash = $12 AS c_token_ok, c.sync_to_user_management AS c_sync, c.group_roles AS c_group_roles FROM c LEFT JOIN ins ON true`,
    [
      s.tenantId,
      s.connectionId,
      id,
      c.user_name,
      c.external_id,
      c.display_name,
      c.email,
      c.active,
      JSON.stringify(c.data),
      link?.userId ?? null,
      link?.owns ?? false,
      check.tokenHash,
      check.sync,
      JSON.stringify(check.groupRoles),
    ],
  );
  const r = rows[0];
  if (!r || !r.c_token_ok) return { kind: 'revoked' };
  if (r.id === null || r.id === undefined) return { kind: 'stale', sync: r.c_sync, groupRoles: r.c_group_roles };
  const { c_token_ok: _a, c_sync: _b, c_group_roles: _c, ...row } = r;
  return { kind: 'inserted', row: row as ScimUserRow };
}

export async function updateUser(q: Queryable, s: Scope, id: string, c: UserColumns): Promise<ScimUserRow> {
  const { rows } = await q.query<ScimUserRow>(
    `UPDATE scim_users SET user_name = $4, external_id = $5, display_name = $6, email = $7, active = $8, data = $9,
       version = version + 1, updated_at = now()
     WHERE tenant_id = $1 AND connection_id = $2 AND id = $3 RETURNING *`,
    [
      s.tenantId,
      s.connectionId,
      id,
      c.user_name,
      c.external_id,
      c.display_name,
      c.email,
      c.active,
      JSON.stringify(c.data),
    ],
  );
  return rows[0];
}

export async function linkUser(
  q: Queryable,
  s: Scope,
  id: string,
  userId: string | null,
  owns: boolean,
): Promise<void> {
  await q.query(
    'UPDATE scim_users SET user_id = $4, owns_user = $5 WHERE tenant_id = $1 AND connection_id = $2 AND id = $3',
    [s.tenantId, s.connectionId, id, userId, owns],
  );
}

export async function setGrantedRoles(q: Queryable, s: Scope, id: string, roleIds: string[]): Promise<void> {
  await q.query(
    'UPDATE scim_users SET granted_role_ids = $4::uuid[] WHERE tenant_id = $1 AND connection_id = $2 AND id = $3',
    [s.tenantId, s.connectionId, id, roleIds],
  );
}

export async function getUser(q: Queryable, s: Scope, id: string, lock = false): Promise<ScimUserRow | undefined> {
  const { rows } = await q.query<ScimUserRow>(
    `SELECT * FROM scim_users WHERE tenant_id = $1 AND connection_id = $2 AND id = $3${lock ? ' FOR UPDATE' : ''}`,
    [s.tenantId, s.connectionId, id],
  );
  return rows[0];
}

export async function userNameTaken(q: Queryable, s: Scope, userName: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM scim_users WHERE tenant_id = $1 AND connection_id = $2 AND lower(user_name) = lower($3) AND id IS DISTINCT FROM $4::uuid',
    [s.tenantId, s.connectionId, userName, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function deleteUser(q: Queryable, s: Scope, id: string): Promise<void> {
  await q.query('DELETE FROM scim_users WHERE tenant_id = $1 AND connection_id = $2 AND id = $3', [
    s.tenantId,
    s.connectionId,
    id,
  ]);
}

export async function usersOfConnection(q: Queryable, s: Scope, onlyUnlinked = false): Promise<ScimUserRow[]> {
  const { rows } = await q.query<ScimUserRow>(
    `SELECT * FROM scim_users WHERE tenant_id = $1 AND connection_id = $2${onlyUnlinked ? ' AND user_id IS NULL' : ' AND user_id IS NOT NULL'} ORDER BY created_at, id`,
    [s.tenantId, s.connectionId],
  );
  return rows;
}

/**
 * The groups of the user `r` as a select-list expression `[{value, display}]` (ordered by name), so a list page
 * reads its users' groups in the same statement.
 */
export const GROUPS_OF_R = `(SELECT coalesce(jsonb_agg(jsonb_build_object('value', g.id::text, 'display', g.display_name) ORDER BY g.display_name, g.id), '[]'::jsonb)
  FROM scim_group_members m JOIN scim_groups g ON g.tenant_id = m.tenant_id AND g.connection_id = m.connection_id AND g.id = m.group_id
  WHERE m.tenant_id = r.tenant_id AND m.connection_id = r.connection_id AND m.user_id = r.id) AS groups__`;

/** Where a sync job has got to: the (created_at, id) of the last directory user it looked at. */
export interface SyncCursor {
  createdAt: string;
  id: string;
}

/**
 * The sync job's next chunk: directory users after `cursor` (in (created_at, id) order, the scim_users_created index)
 * that have an email and are not yet in user management, locked; with the cursor of the last one.
 */
export async function unlinkedUsers(
  q: Queryable,
  s: Scope,
  cursor: SyncCursor | undefined,
  limit: number,
): Promise<{ rows: ScimUserRow[]; cursor?: SyncCursor }> {
  const { rows } = await q.query<ScimUserRow & { created_key: string }>(
    `SELECT *, created_at::text AS created_key FROM scim_users
     WHERE tenant_id = $1 AND connection_id = $2 AND user_id IS NULL AND email IS NOT NULL
       ${cursor ? 'AND (created_at, id) > ($4::timestamptz, $5::uuid)' : ''}
     ORDER BY created_at, id LIMIT $3 FOR UPDATE`,
    cursor ? [s.tenantId, s.connectionId, limit, cursor.createdAt, cursor.id] : [s.tenantId, s.connectionId, limit],
  );
  const last = rows.at(-1);
  return {
    rows: rows.map(({ created_key: _k, ...r }) => r as ScimUserRow),
    cursor: last ? { createdAt: last.created_key, id: last.id } : cursor,
  };
}

/**
 * One page of a filtered, sorted list, with the total: `where` and `order` are SQL over the alias `r`; `extra` adds
 * select-list expressions over `r` (e.g. GROUPS_OF_R).
 */
export async function page<T>(
  q: Queryable,
  table: 'scim_users' | 'scim_groups',
  s: Scope,
  where: string,
  order: string,
  p: SqlParams,
  offset: number,
  limit: number,
  extra = '',
): Promise<{ rows: T[]; total: number }> {
  const base = `FROM ${table} r WHERE r.tenant_id = $1 AND r.connection_id = $2 AND (${where})`;
  if (limit === 0) {
    const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n ${base}`, p.values);
    return { rows: [], total: rows[0].n };
  }
  const lim = p.add(limit);
  const off = p.add(offset);
  const { rows } = await q.query<T & { total__: number }>(
    `SELECT r.*${extra ? `, ${extra}` : ''}, count(*) OVER ()::int AS total__ ${base} ORDER BY ${order} LIMIT ${lim} OFFSET ${off}`,
    p.values,
  );
  if (rows.length === 0 && offset > 0) {
    const c = await q.query<{ n: number }>(`SELECT count(*)::int AS n ${base}`, p.values.slice(0, -2));
    return { rows: [], total: c.rows[0].n };
  }
  return { rows: rows.map(({ total__, ...r }) => r as unknown as T), total: rows[0]?.total__ ?? 0 };
}

// -- groups --

export async function insertGroup(
  q: Queryable,
  s: Scope,
  id: string,
  displayName: string,
  externalId: string | null,
  data: Record<string, unknown>,
): Promise<ScimGroupRow> {
  const { rows } = await q.query<ScimGroupRow>(
    `INSERT INTO scim_groups (tenant_id, connection_id, id, display_name, external_id, data) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [s.tenantId, s.connectionId, id, displayName, externalId, JSON.stringify(data)],
  );
  return rows[0];
}

export async function updateGroup(
  q: Queryable,
  s: Scope,
  id: string,
  displayName: string,
  externalId: string | null,
  data: Record<string, unknown>,
): Promise<ScimGroupRow> {
  const { rows } = await q.query<ScimGroupRow>(
    `UPDATE scim_groups SET display_name = $4, external_id = $5, data = $6, version = version + 1, updated_at = now()
     WHERE tenant_id = $1 AND connection_id = $2 AND id = $3 RETURNING *`,
    [s.tenantId, s.connectionId, id, displayName, externalId, JSON.stringify(data)],
  );
  return rows[0];
}

export async function bumpGroup(q: Queryable, s: Scope, id: string): Promise<ScimGroupRow> {
  const { rows } = await q.query<ScimGroupRow>(
    'UPDATE scim_groups SET version = version + 1, updated_at = now() WHERE tenant_id = $1 AND connection_id = $2 AND id = $3 RETURNING *',
    [s.tenantId, s.connectionId, id],
  );
  return rows[0];
}

export async function getGroup(q: Queryable, s: Scope, id: string, lock = false): Promise<ScimGroupRow | undefined> {
  const { rows } = await q.query<ScimGroupRow>(
    `SELECT * FROM scim_groups WHERE tenant_id = $1 AND connection_id = $2 AND id = $3${lock ? ' FOR UPDATE' : ''}`,
    [s.tenantId, s.connectionId, id],
  );
  return rows[0];
}

export async function groupNameTaken(q: Queryable, s: Scope, name: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM scim_groups WHERE tenant_id = $1 AND connection_id = $2 AND lower(display_name) = lower($3) AND id IS DISTINCT FROM $4::uuid',
    [s.tenantId, s.connectionId, name, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function deleteGroup(q: Queryable, s: Scope, id: string): Promise<void> {
  await q.query('DELETE FROM scim_groups WHERE tenant_id = $1 AND connection_id = $2 AND id = $3', [
    s.tenantId,
    s.connectionId,
    id,
  ]);
}

// -- memberships --

/** The ids among `ids` that are users of this connection. */
export async function existingUserIds(q: Queryable, s: Scope, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    'SELECT id::text AS id FROM scim_users WHERE tenant_id = $1 AND connection_id = $2 AND id::text = ANY($3::text[])',
    [s.tenantId, s.connectionId, ids],
  );
  return rows.map((r) => r.id);
}

export async function addMembers(q: Queryable, s: Scope, groupId: string, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const { rows } = await q.query<{ user_id: string }>(
    `INSERT INTO scim_group_members (tenant_id, connection_id, group_id, user_id) SELECT $1, $2, $3, unnest($4::uuid[])
     ON CONFLICT DO NOTHING RETURNING user_id::text`,
    [s.tenantId, s.connectionId, groupId, userIds],
  );
  return rows.map((r) => r.user_id);
}

/** Removes members (all when `userIds` is undefined); returns the removed user ids. */
export async function removeMembers(q: Queryable, s: Scope, groupId: string, userIds?: string[]): Promise<string[]> {
  const { rows } = await q.query<{ user_id: string }>(
    `DELETE FROM scim_group_members WHERE tenant_id = $1 AND connection_id = $2 AND group_id = $3${userIds ? ' AND user_id::text = ANY($4::text[])' : ''}
     RETURNING user_id::text`,
    userIds ? [s.tenantId, s.connectionId, groupId, userIds] : [s.tenantId, s.connectionId, groupId],
  );
  return rows.map((r) => r.user_id);
}

export async function membersOf(
  q: Queryable,
  s: Scope,
  groupIds: string[],
): Promise<Map<string, { value: string; display: string | null }[]>> {
  const out = new Map<string, { value: string; display: string | null }[]>();
  if (groupIds.length === 0) return out;
  const { rows } = await q.query<{ group_id: string; user_id: string; display: string | null }>(
    `SELECT m.group_id::text, m.user_id::text, coalesce(u.display_name, u.user_name) AS display FROM scim_group_members m
     JOIN scim_users u ON u.tenant_id = m.tenant_id AND u.connection_id = m.connection_id AND u.id = m.user_id
     WHERE m.tenant_id = $1 AND m.connection_id = $2 AND m.group_id = ANY($3::uuid[]) ORDER BY m.group_id, u.created_at, u.id`,
    [s.tenantId, s.connectionId, groupIds],
  );
  for (const r of rows)
    (out.get(r.group_id) ?? out.set(r.group_id, []).get(r.group_id)!).push({ value: r.user_id, display: r.display });
  return out;
}

export async function groupsOf(
  q: Queryable,
  s: Scope,
  userIds: string[],
): Promise<Map<string, { value: string; display: string }[]>> {
  const out = new Map<string, { value: string; display: string }[]>();
  if (userIds.length === 0) return out;
  const { rows } = await q.query<{ user_id: string; group_id: string; display_name: string }>(
    `SELECT m.user_id::text, m.group_id::text, g.display_name FROM scim_group_members m
     JOIN scim_groups g ON g.tenant_id = m.tenant_id AND g.connection_id = m.connection_id AND g.id = m.group_id
     WHERE m.tenant_id = $1 AND m.connection_id = $2 AND m.user_id = ANY($3::uuid[]) ORDER BY g.display_name, g.id`,
    [s.tenantId, s.connectionId, userIds],
  );
  for (const r of rows)
    (out.get(r.user_id) ?? out.set(r.user_id, []).get(r.user_id)!).push({ value: r.group_id, display: r.display_name });
  return out;
}

/** Lower-cased display names of the groups each user is in (for the group-to-role mapping). */
export async function groupNamesOf(q: Queryable, s: Scope, userIds: string[]): Promise<Map<string, string[]>> {
  const m = await groupsOf(q, s, userIds);
  return new Map([...m].map(([k, v]) => [k, v.map((g) => g.display.toLowerCase())]));
}

export async function memberIdsOf(q: Queryable, s: Scope, groupId: string): Promise<string[]> {
  const { rows } = await q.query<{ user_id: string }>(
    'SELECT user_id::text FROM scim_group_members WHERE tenant_id = $1 AND connection_id = $2 AND group_id = $3',
    [s.tenantId, s.connectionId, groupId],
  );
  return rows.map((r) => r.user_id);
}
