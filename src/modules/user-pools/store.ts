import type { Queryable } from '../../storage/db.ts';
import { applicationTablesSql } from '../user-migration/index.ts';
import { userTablesSql } from '../users/index.ts';
import { BUILT_IN_ID } from './schema.ts';

export interface SourceRow {
  id: string;
  name: string;
  type: string;
  description: string;
  idx: number;
  configuration: Record<string, unknown>;
  secrets_enc: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Every source with its applications and user count, in one statement. The built-in pool holds the applications that
 * no external source claims, and counts every user of the environment; an external source counts the users who hold
 * access to one of its applications.
 */
export async function listSources(
  q: Queryable,
  id?: string,
): Promise<(SourceRow & { app_ids: string[]; users_count: number })[]> {
  const { rows } = await q.query<SourceRow & { app_ids: string[]; users_count: number }>(
    `SELECT s.*,
       CASE WHEN s.id = $1::uuid
         THEN ARRAY(SELECT a.id::text FROM (${applicationTablesSql.applications}) a
                     WHERE NOT EXISTS (SELECT 1 FROM user_source_apps x WHERE x.app_id = a.id)
                     ORDER BY a.created_at, a.id)
         ELSE ARRAY(SELECT x.app_id::text FROM user_source_apps x WHERE x.source_id = s.id ORDER BY x.app_id) END AS app_ids,
       CASE WHEN s.id = $1::uuid THEN (SELECT count(*)::int FROM (${userTablesSql.users}) u)
         ELSE (SELECT count(DISTINCT ua.user_id)::int FROM (${applicationTablesSql.userApplications}) ua
                 JOIN user_source_apps x ON x.app_id = ua.app_id WHERE x.source_id = s.id) END AS users_count
     FROM user_sources s WHERE ($2::uuid IS NULL OR s.id = $2::uuid) ORDER BY s.idx, s.name, s.id`,
    [BUILT_IN_ID, id ?? null],
  );
  return rows;
}

export async function findSource(q: Queryable, id: string, lock = false): Promise<SourceRow | undefined> {
  const { rows } = await q.query<SourceRow>(`SELECT * FROM user_sources WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [
    id,
  ]);
  return rows[0];
}

export async function insertSource(q: Queryable, r: Omit<SourceRow, 'created_at' | 'updated_at'>): Promise<void> {
  await q.query(
    `INSERT INTO user_sources (id, name, type, description, idx, configuration, secrets_enc) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [r.id, r.name, r.type, r.description, r.idx, JSON.stringify(r.configuration), r.secrets_enc],
  );
}

export async function updateSource(
  q: Queryable,
  id: string,
  values: Partial<Omit<SourceRow, 'id' | 'created_at' | 'updated_at'>>,
): Promise<void> {
  const cols = Object.keys(values) as (keyof typeof values)[];
  if (!cols.length) return;
  await q.query(
    `UPDATE user_sources SET ${[...cols.map((c, i) => `${c} = $${i + 2}`), 'updated_at = now()'].join(', ')} WHERE id = $1`,
    [id, ...cols.map((c) => (c === 'configuration' ? JSON.stringify(values[c]) : values[c]))],
  );
}

export async function deleteSource(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM user_sources WHERE id = $1', [id]);
}

export async function existingApps(q: Queryable, ids: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM (${applicationTablesSql.applications}) a WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Moves applications to a source (from whichever held them); the built-in pool holds an application by having no row. */
export async function assignApps(q: Queryable, sourceId: string, appIds: string[]): Promise<void> {
  if (sourceId === BUILT_IN_ID) {
    await q.query('DELETE FROM user_source_apps WHERE app_id = ANY($1::uuid[])', [appIds]);
    return;
  }
  await q.query(
    `INSERT INTO user_source_apps (app_id, source_id) SELECT a, $1 FROM unnest($2::uuid[]) AS a
     ON CONFLICT (app_id) DO UPDATE SET source_id = excluded.source_id`,
    [sourceId, appIds],
  );
}

/** Takes applications away from a source: they return to the built-in pool. */
export async function unassignApps(q: Queryable, sourceId: string, appIds: string[]): Promise<void> {
  await q.query('DELETE FROM user_source_apps WHERE source_id = $1 AND app_id = ANY($2::uuid[])', [sourceId, appIds]);
}

/** One page of a source's users by email, with the total. */
export async function usersOf(
  q: Queryable,
  sourceId: string,
  limit: number,
  page: number,
): Promise<{ rows: { email: string; last_login: Date | null }[]; total: number }> {
  const builtIn = sourceId === BUILT_IN_ID;
  const from = builtIn
    ? `FROM (${userTablesSql.users}) u`
    : `FROM (${userTablesSql.users}) u WHERE EXISTS (SELECT 1 FROM (${applicationTablesSql.userApplications}) ua
         JOIN user_source_apps x ON x.app_id = ua.app_id WHERE x.source_id = $1 AND ua.user_id = u.id)`;
  const params = builtIn ? [] : [sourceId];
  const { rows } = await q.query<{ email: string; last_login: Date | null }>(
    `SELECT coalesce(u.email, '') AS email, u.last_login ${from} ORDER BY u.email LIMIT ${limit} OFFSET ${page * limit}`,
    params,
  );
  const { rows: c } = await q.query<{ n: number }>(`SELECT count(*)::int AS n ${from}`, params);
  return { rows, total: c[0].n };
}

export async function sourceOfApp(q: Queryable, appId: string): Promise<{ id: string; type: string } | undefined> {
  const { rows } = await q.query<{ id: string; type: string }>(
    'SELECT s.id, s.type FROM user_source_apps x JOIN user_sources s ON s.id = x.source_id WHERE x.app_id = $1',
    [appId],
  );
  return rows[0];
}
