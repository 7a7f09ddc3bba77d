import type { Queryable } from '../../storage/db.ts';
import type { TargetingRule } from './targeting.ts';

export interface TemplateRow {
  id: string;
  key: string;
  name: string;
  description: string;
  expiration: number;
  algorithm: string;
  claims: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}
export interface TemplateValues {
  key: string;
  name: string;
  description: string;
  expiration: number;
  algorithm: string;
  claims: Record<string, unknown>;
}
export interface TargetingRow {
  id: string;
  rules: TargetingRule[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, key, name, description, expiration, algorithm, claims, created_at, updated_at';
const SORT: Record<string, string> = {
  id: 'id',
  key: 'key',
  name: 'name',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};

export async function insert(q: Queryable, id: string, v: TemplateValues): Promise<TemplateRow> {
  const { rows } = await q.query<TemplateRow>(
    `INSERT INTO jwt_templates (id, key, name, description, expiration, algorithm, claims)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING ${COLUMNS}`,
    [id, v.key, v.name, v.description, v.expiration, v.algorithm, JSON.stringify(v.claims)],
  );
  return rows[0];
}

export async function byId(q: Queryable, id: string, lock = false): Promise<TemplateRow | undefined> {
  const { rows } = await q.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM jwt_templates WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0];
}

export async function update(q: Queryable, id: string, v: TemplateValues): Promise<TemplateRow> {
  const { rows } = await q.query<TemplateRow>(
    `UPDATE jwt_templates SET key = $2, name = $3, description = $4, expiration = $5, algorithm = $6,
       claims = $7::jsonb, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, v.key, v.name, v.description, v.expiration, v.algorithm, JSON.stringify(v.claims)],
  );
  return rows[0];
}

export async function remove(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM jwt_templates WHERE id = $1', [id]);
}

/** The page and the total of the filtered list (one statement). */
export async function list(
  q: Queryable,
  f: { keys?: string[]; ids?: string[]; limit: number; offset: number; sortBy: string; order: 'ASC' | 'DESC' },
): Promise<{ rows: TemplateRow[]; total: number }> {
  const { rows } = await q.query<TemplateRow & { total: string }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM jwt_templates
     WHERE ($1::text[] IS NULL OR key = ANY($1)) AND ($2::uuid[] IS NULL OR id = ANY($2))
     ORDER BY ${SORT[f.sortBy] ?? 'created_at'} ${f.order === 'DESC' ? 'DESC' : 'ASC'}, id
     LIMIT $3 OFFSET $4`,
    [f.keys ?? null, f.ids ?? null, f.limit, f.offset],
  );
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && f.offset > 0) {
    const c = await q.query<{ n: string }>(
      `SELECT count(*) AS n FROM jwt_templates
       WHERE ($1::text[] IS NULL OR key = ANY($1)) AND ($2::uuid[] IS NULL OR id = ANY($2))`,
      [f.keys ?? null, f.ids ?? null],
    );
    total = Number(c.rows[0].n);
  }
  return { rows: rows.map(({ total: _, ...r }) => r), total };
}

/** Which of `keys` name no template. */
export async function missingKeys(q: Queryable, keys: string[]): Promise<string[]> {
  const { rows } = await q.query<{ key: string }>(
    `SELECT k AS key FROM unnest($1::text[]) AS k WHERE NOT EXISTS (SELECT 1 FROM jwt_templates t WHERE t.key = k)`,
    [keys],
  );
  return rows.map((r) => r.key);
}

export async function targeting(q: Queryable, lock = false): Promise<TargetingRow | undefined> {
  const { rows } = await q.query<TargetingRow>(
    `SELECT id, rules, created_at, updated_at FROM jwt_template_targeting${lock ? ' FOR UPDATE' : ''}`,
  );
  return rows[0];
}

/** Inserts the configuration; undefined when one exists. */
export async function insertTargeting(q: Queryable, id: string, rules: TargetingRule[]) {
  const { rows } = await q.query<TargetingRow>(
    `INSERT INTO jwt_template_targeting (id, rules) VALUES ($1, $2::jsonb)
     ON CONFLICT (singleton) DO NOTHING RETURNING id, rules, created_at, updated_at`,
    [id, JSON.stringify(rules)],
  );
  return rows[0] as TargetingRow | undefined;
}

/** Replaces the rules, creating the configuration when none exists (`id` used only then). */
export async function upsertTargeting(q: Queryable, id: string, rules: TargetingRule[]): Promise<TargetingRow> {
  const { rows } = await q.query<TargetingRow>(
    `INSERT INTO jwt_template_targeting (id, rules) VALUES ($1, $2::jsonb)
     ON CONFLICT (singleton) DO UPDATE SET rules = EXCLUDED.rules, updated_at = now()
     RETURNING id, rules, created_at, updated_at`,
    [id, JSON.stringify(rules)],
  );
  return rows[0];
}

export async function removeTargeting(q: Queryable, id: string): Promise<boolean> {
  const r = await q.query('DELETE FROM jwt_template_targeting WHERE id = $1 RETURNING id', [id]);
  return r.rows.length > 0;
}

/**
 * What token issue needs, in one statement: the rules and the templates they name (null when there is no
 * configuration or it has no rules, the usual case).
 */
export async function forTokens(
  q: Queryable,
): Promise<{ rules: TargetingRule[]; templates: Pick<TemplateRow, 'key' | 'expiration' | 'claims'>[] } | null> {
  const { rows } = await q.query<{ rules: TargetingRule[]; templates: TemplateRow[] | null }>(
    `SELECT g.rules, (SELECT json_agg(json_build_object('key', t.key, 'expiration', t.expiration, 'claims', t.claims))
                        FROM jwt_templates t
                       WHERE t.key IN (SELECT r->>'treatment' FROM jsonb_array_elements(g.rules) r)) AS templates
       FROM jwt_template_targeting g WHERE jsonb_array_length(g.rules) > 0`,
  );
  if (!rows[0]) return null;
  return { rules: rows[0].rules, templates: rows[0].templates ?? [] };
}
