import type { Queryable } from '../../storage/db.ts';

/** SQL of the entitlements module. Callers pass the transaction handle for writes. */
export interface FeatureRow {
  id: string;
  key: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  permissions: string[];
  created_at: Date;
  updated_at: Date;
}
export interface PlanRow {
  id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  default_treatment: 'true' | 'false';
  rules: unknown[];
  default_time_limitation: number | null;
  assign_on_signup: boolean;
  created_at: Date;
  updated_at: Date;
  feature_ids: string[];
}
export interface GrantRow {
  id: string;
  tenant_id: string;
  plan_id: string;
  user_id: string | null;
  expiration_date: Date | null;
  created_at: Date;
  updated_at: Date;
}
export interface FlagRow {
  id: string;
  feature_id: string;
  name: string;
  description: string;
  metadata: string;
  on: boolean;
  default_treatment: 'true' | 'false';
  off_treatment: 'true' | 'false';
  rules: unknown[];
  created_at: Date;
  updated_at: Date;
  feature_key: string;
  feature_name: string;
}
export interface RouteRow {
  id: string;
  method: string;
  path: string;
  priority: number;
  description: string;
  policy_type: string;
  rules: { id: string; type: string; value: string }[];
  created_at: Date;
  updated_at: Date;
}
export interface SettingsRow {
  routes_mode: 'guard' | 'monitor';
  snapshot_offset: number;
  settings_id: string;
}

/** Bumps the snapshot offset; call inside every write's transaction (the row lock orders concurrent writers). */
export async function bumpOffset(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ snapshot_offset: number }>(
    'UPDATE entitlement_settings SET snapshot_offset = snapshot_offset + 1 WHERE id = 1 RETURNING snapshot_offset',
  );
  return Number(rows[0].snapshot_offset);
}
export async function settings(q: Queryable): Promise<SettingsRow> {
  const { rows } = await q.query<SettingsRow>(
    'SELECT routes_mode, snapshot_offset, settings_id FROM entitlement_settings WHERE id = 1',
  );
  return { ...rows[0], snapshot_offset: Number(rows[0].snapshot_offset) };
}
export async function setRoutesMode(q: Queryable, mode: string): Promise<void> {
  await q.query('UPDATE entitlement_settings SET routes_mode = $1 WHERE id = 1', [mode]);
}

/** Sets the given columns of one row by id; jsonb values are passed as JSON text. */
export async function updateRow<T>(
  q: Queryable,
  table: string,
  id: string,
  values: Record<string, unknown>,
): Promise<T | undefined> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `"${c}" = $${i + 2}`);
  const params = cols.map((c) => {
    const v = values[c];
    return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? JSON.stringify(v)
      : c === 'rules'
        ? JSON.stringify(v)
        : v;
  });
  const { rows } = await q.query<T>(
    `UPDATE ${table} SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING id`,
    [id, ...params],
  );
  return rows[0];
}
export async function insertRow(q: Queryable, table: string, values: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(values);
  const params = cols.map((c) => {
    const v = values[c];
    return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? JSON.stringify(v)
      : c === 'rules'
        ? JSON.stringify(v)
        : v;
  });
  await q.query(
    `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
    params,
  );
}
export async function deleteRow(q: Queryable, table: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
  return rowCount > 0;
}

const like = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isId = (s: string) => UUID.test(s);

export async function features(
  q: Queryable,
  opts: { ids?: string[]; keys?: string[]; filter?: string; limit?: number; offset?: number; desc?: boolean } = {},
): Promise<FeatureRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.ids) {
    params.push(opts.ids.filter(isId));
    where.push(`id = ANY($${params.length}::uuid[])`);
  }
  if (opts.keys) {
    params.push(opts.keys);
    where.push(`key = ANY($${params.length}::text[])`);
  }
  if (opts.filter) {
    params.push(like(opts.filter.toLowerCase()));
    where.push(`(lower(name) LIKE $${params.length} OR lower(key) LIKE $${params.length})`);
  }
  params.push(opts.limit ?? 1_000_000, opts.offset ?? 0);
  const { rows } = await q.query<FeatureRow>(
    `SELECT * FROM entitlement_features ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at ${opts.desc ? 'DESC' : 'ASC'}, id LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}

const PLAN_SELECT = `SELECT p.*, coalesce((SELECT array_agg(pf.feature_id::text ORDER BY pf.feature_id) FROM entitlement_plan_features pf WHERE pf.plan_id = p.id), '{}') AS feature_ids FROM entitlement_plans p`;
export async function plans(
  q: Queryable,
  opts: { ids?: string[]; filter?: string; limit?: number; offset?: number; desc?: boolean } = {},
): Promise<PlanRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.ids) {
    params.push(opts.ids.filter(isId));
    where.push(`p.id = ANY($${params.length}::uuid[])`);
  }
  if (opts.filter) {
    params.push(like(opts.filter.toLowerCase()));
    where.push(`lower(p.name) LIKE $${params.length}`);
  }
  params.push(opts.limit ?? 1_000_000, opts.offset ?? 0);
  const { rows } = await q.query<PlanRow>(
    `${PLAN_SELECT} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY p.created_at ${opts.desc ? 'DESC' : 'ASC'}, p.id LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}
export async function linkFeatures(q: Queryable, planId: string, featureIds: string[]): Promise<void> {
  if (featureIds.length)
    await q.query(
      'INSERT INTO entitlement_plan_features (plan_id, feature_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING',
      [planId, featureIds],
    );
}
export async function unlinkFeatures(q: Queryable, planId: string, featureIds: string[] | 'all'): Promise<void> {
  if (featureIds === 'all') await q.query('DELETE FROM entitlement_plan_features WHERE plan_id = $1', [planId]);
  else
    await q.query('DELETE FROM entitlement_plan_features WHERE plan_id = $1 AND feature_id = ANY($2::uuid[])', [
      planId,
      featureIds,
    ]);
}

export async function grants(
  q: Queryable,
  opts: {
    ids?: string[];
    planIds?: string[];
    tenantId?: string;
    userId?: string;
    level?: 'USER' | 'TENANT';
    limit?: number;
    offset?: number;
    desc?: boolean;
  } = {},
): Promise<GrantRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.ids) {
    params.push(opts.ids.filter(isId));
    where.push(`id = ANY($${params.length}::uuid[])`);
  }
  if (opts.planIds) {
    params.push(opts.planIds.filter(isId));
    where.push(`plan_id = ANY($${params.length}::uuid[])`);
  }
  if (opts.tenantId) {
    params.push(opts.tenantId);
    where.push(`tenant_id = $${params.length}`);
  }
  if (opts.userId) {
    params.push(opts.userId);
    where.push(`user_id = $${params.length}`);
  }
  if (opts.level) where.push(opts.level === 'USER' ? 'user_id IS NOT NULL' : 'user_id IS NULL');
  params.push(opts.limit ?? 10_000_000, opts.offset ?? 0);
  const { rows } = await q.query<GrantRow>(
    `SELECT * FROM entitlement_grants ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY created_at ${opts.desc ? 'DESC' : 'ASC'}, tenant_id, id LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}

export async function flags(
  q: Queryable,
  opts: { ids?: string[]; filter?: string; limit?: number; offset?: number; desc?: boolean } = {},
): Promise<FlagRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.ids) {
    params.push(opts.ids.filter(isId));
    where.push(`ff.id = ANY($${params.length}::uuid[])`);
  }
  if (opts.filter) {
    params.push(like(opts.filter.toLowerCase()));
    where.push(`lower(ff.name) LIKE $${params.length}`);
  }
  params.push(opts.limit ?? 1_000_000, opts.offset ?? 0);
  const { rows } = await q.query<FlagRow>(
    `SELECT ff.*, f.key AS feature_key, f.name AS feature_name FROM entitlement_feature_flags ff
    JOIN entitlement_features f ON f.id = ff.feature_id ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY ff.created_at ${opts.desc ? 'DESC' : 'ASC'}, ff.id LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}

export async function routes(q: Queryable, ids?: string[]): Promise<RouteRow[]> {
  const { rows } = await q.query<RouteRow>(
    `SELECT * FROM entitlement_routes ${ids ? 'WHERE id = ANY($1::uuid[])' : ''} ORDER BY priority, created_at, id`,
    ids ? [ids.filter(isId)] : [],
  );
  return rows;
}
export async function nextPriority(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ p: number | null }>('SELECT max(priority) AS p FROM entitlement_routes');
  return (rows[0].p === null ? 0 : Number(rows[0].p)) + 1;
}
