import type { Queryable } from '../../storage/db.ts';

/** SQL of ReBAC: entity types, their relations and actions, relation assignments. Writes take the transaction handle. */
export interface EntityTypeRow {
  key: string;
  description: string;
  created_at: Date;
}
export interface RelationRow {
  entity_type_key: string;
  key: string;
  subject_entity_type_keys: string[];
}
export interface ActionRow {
  entity_type_key: string;
  key: string;
  relation_keys: string[];
}
export interface AssignmentRow {
  subject_entity_type_key: string;
  subject_key: string;
  relation_key: string;
  target_entity_type_key: string;
  target_key: string;
  active_from: Date | null;
  active_until: Date | null;
}
export type AssignmentKey = Pick<
  AssignmentRow,
  'subject_entity_type_key' | 'subject_key' | 'relation_key' | 'target_entity_type_key' | 'target_key'
>;

export async function entityTypes(
  q: Queryable,
  opts: { keys?: string[]; limit?: number; offset?: number; lock?: boolean } = {},
): Promise<EntityTypeRow[]> {
  const params: unknown[] = [];
  let where = '';
  if (opts.keys) {
    params.push(opts.keys);
    where = 'WHERE key = ANY($1::text[])';
  }
  params.push(opts.limit ?? 1_000_000, opts.offset ?? 0);
  const { rows } = await q.query<EntityTypeRow>(
    `SELECT key, description, created_at FROM entitlement_entity_types ${where}
    ORDER BY seq LIMIT $${params.length - 1} OFFSET $${params.length}${opts.lock ? ' FOR UPDATE' : ''}`,
    params,
  );
  return rows;
}
export async function insertEntityType(q: Queryable, key: string, description: string): Promise<void> {
  await q.query('INSERT INTO entitlement_entity_types (key, description) VALUES ($1, $2)', [key, description]);
}
/** Renames (ON UPDATE CASCADE moves relations, actions and assignments) and rewrites the subject-type arrays. */
export async function updateEntityType(
  q: Queryable,
  key: string,
  next: { key: string; description?: string },
): Promise<void> {
  await q.query(
    `UPDATE entitlement_entity_types SET key = $2, description = coalesce($3, description), updated_at = now() WHERE key = $1`,
    [key, next.key, next.description ?? null],
  );
  if (next.key !== key) {
    await q.query(
      'UPDATE entitlement_entity_relations SET subject_entity_type_keys = array_replace(subject_entity_type_keys, $1, $2) WHERE $1 = ANY(subject_entity_type_keys)',
      [key, next.key],
    );
  }
}
export async function deleteEntityType(q: Queryable, key: string): Promise<void> {
  await q.query('DELETE FROM entitlement_entity_types WHERE key = $1', [key]);
}
/** Who still needs an entity type: other types' relations naming it as subject, assignments with it as subject or target. */
export async function entityTypeUsers(
  q: Queryable,
  key: string,
): Promise<{ relations: string[]; assignments: number }> {
  const rel = await q.query<{ r: string }>(
    `SELECT entity_type_key || '.' || key AS r FROM entitlement_entity_relations
    WHERE $1 = ANY(subject_entity_type_keys) AND entity_type_key <> $1 ORDER BY 1 LIMIT 20`,
    [key],
  );
  const asg = await q.query<{ n: string }>(
    `SELECT count(*) AS n FROM entitlement_relation_assignments
    WHERE subject_entity_type_key = $1 OR target_entity_type_key = $1`,
    [key],
  );
  return { relations: rel.rows.map((x) => x.r), assignments: Number(asg.rows[0].n) };
}

export async function relations(q: Queryable, typeKey: string, keys?: string[]): Promise<RelationRow[]> {
  const { rows } = await q.query<RelationRow>(
    `SELECT entity_type_key, key, subject_entity_type_keys FROM entitlement_entity_relations
    WHERE entity_type_key = $1 ${keys ? 'AND key = ANY($2::text[])' : ''} ORDER BY seq`,
    keys ? [typeKey, keys] : [typeKey],
  );
  return rows;
}
export async function insertRelation(
  q: Queryable,
  typeKey: string,
  key: string,
  subjectTypes: string[],
): Promise<void> {
  await q.query(
    'INSERT INTO entitlement_entity_relations (entity_type_key, key, subject_entity_type_keys) VALUES ($1, $2, $3)',
    [typeKey, key, subjectTypes],
  );
}
/** Renames (assignments follow by cascade; actions' relation lists are rewritten) and replaces the subject types. */
export async function updateRelation(
  q: Queryable,
  typeKey: string,
  key: string,
  next: { key: string; subjectTypes: string[] },
): Promise<void> {
  await q.query(
    'UPDATE entitlement_entity_relations SET key = $3, subject_entity_type_keys = $4 WHERE entity_type_key = $1 AND key = $2',
    [typeKey, key, next.key, next.subjectTypes],
  );
  if (next.key !== key) {
    await q.query(
      'UPDATE entitlement_entity_actions SET relation_keys = array_replace(relation_keys, $2, $3) WHERE entity_type_key = $1 AND $2 = ANY(relation_keys)',
      [typeKey, key, next.key],
    );
  }
}
export async function deleteRelation(q: Queryable, typeKey: string, key: string): Promise<boolean> {
  return (
    (await q.query('DELETE FROM entitlement_entity_relations WHERE entity_type_key = $1 AND key = $2', [typeKey, key]))
      .rowCount > 0
  );
}
/** Actions of the type listing the relation, and how many assignments use it (per subject type when given). */
export async function relationUsers(
  q: Queryable,
  typeKey: string,
  key: string,
  subjectTypes?: string[],
): Promise<{ actions: string[]; assignments: number }> {
  const act = await q.query<{ key: string }>(
    'SELECT key FROM entitlement_entity_actions WHERE entity_type_key = $1 AND $2 = ANY(relation_keys) ORDER BY key',
    [typeKey, key],
  );
  const asg = await q.query<{ n: string }>(
    `SELECT count(*) AS n FROM entitlement_relation_assignments WHERE target_entity_type_key = $1 AND relation_key = $2
    ${subjectTypes ? 'AND subject_entity_type_key = ANY($3::text[])' : ''}`,
    subjectTypes ? [typeKey, key, subjectTypes] : [typeKey, key],
  );
  return { actions: act.rows.map((x) => x.key), assignments: Number(asg.rows[0].n) };
}

export async function actions(q: Queryable, typeKey: string, keys?: string[]): Promise<ActionRow[]> {
  const { rows } = await q.query<ActionRow>(
    `SELECT entity_type_key, key, relation_keys FROM entitlement_entity_actions
    WHERE entity_type_key = $1 ${keys ? 'AND key = ANY($2::text[])' : ''} ORDER BY seq`,
    keys ? [typeKey, keys] : [typeKey],
  );
  return rows;
}
export async function insertAction(q: Queryable, typeKey: string, key: string, relationKeys: string[]): Promise<void> {
  await q.query('INSERT INTO entitlement_entity_actions (entity_type_key, key, relation_keys) VALUES ($1, $2, $3)', [
    typeKey,
    key,
    relationKeys,
  ]);
}
export async function updateAction(
  q: Queryable,
  typeKey: string,
  key: string,
  next: { key: string; relationKeys: string[] },
): Promise<void> {
  await q.query(
    'UPDATE entitlement_entity_actions SET key = $3, relation_keys = $4 WHERE entity_type_key = $1 AND key = $2',
    [typeKey, key, next.key, next.relationKeys],
  );
}
export async function deleteAction(q: Queryable, typeKey: string, key: string): Promise<boolean> {
  return (
    (await q.query('DELETE FROM entitlement_entity_actions WHERE entity_type_key = $1 AND key = $2', [typeKey, key]))
      .rowCount > 0
  );
}

const A_COLS =
  'subject_entity_type_key, subject_key, relation_key, target_entity_type_key, target_key, active_from, active_until';
export async function assignments(
  q: Queryable,
  f: Partial<AssignmentKey>,
  limit: number,
  offset: number,
): Promise<AssignmentRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [col, v] of Object.entries(f))
    if (v !== undefined) {
      params.push(v);
      where.push(`${col} = $${params.length}`);
    }
  params.push(limit, offset);
  const { rows } = await q.query<AssignmentRow>(
    `SELECT ${A_COLS} FROM entitlement_relation_assignments ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY seq LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}
/** Inserts or replaces the window of an existing assignment of the same five keys. */
export async function upsertAssignment(q: Queryable, a: AssignmentRow): Promise<AssignmentRow> {
  const { rows } = await q.query<AssignmentRow>(
    `INSERT INTO entitlement_relation_assignments (${A_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (target_entity_type_key, target_key, relation_key, subject_entity_type_key, subject_key)
    DO UPDATE SET active_from = EXCLUDED.active_from, active_until = EXCLUDED.active_until RETURNING ${A_COLS}`,
    [
      a.subject_entity_type_key,
      a.subject_key,
      a.relation_key,
      a.target_entity_type_key,
      a.target_key,
      a.active_from,
      a.active_until,
    ],
  );
  return rows[0];
}
export async function deleteAssignment(q: Queryable, a: AssignmentKey): Promise<void> {
  await q.query(
    `DELETE FROM entitlement_relation_assignments WHERE target_entity_type_key = $1 AND target_key = $2 AND relation_key = $3
    AND subject_entity_type_key = $4 AND subject_key = $5`,
    [a.target_entity_type_key, a.target_key, a.relation_key, a.subject_entity_type_key, a.subject_key],
  );
}
/** Assignments linking the subject to the target through any of the relations, active or not. */
export async function linking(
  q: Queryable,
  s: { type: string; key: string },
  t: { type: string; key: string },
  relationKeys: string[],
): Promise<AssignmentRow[]> {
  const { rows } = await q.query<AssignmentRow>(
    `SELECT ${A_COLS} FROM entitlement_relation_assignments WHERE target_entity_type_key = $1 AND target_key = $2
    AND relation_key = ANY($3::text[]) AND subject_entity_type_key = $4 AND subject_key = $5 ORDER BY relation_key`,
    [t.type, t.key, relationKeys, s.type, s.key],
  );
  return rows;
}
