import type { Queryable } from '../../storage/db.ts';
import type { NewTenant, TenantRow } from './rows.ts';

export type { NewTenant, TenantRow } from './rows.ts';

/** API field → column, for the descriptive fields a caller may set. */
export const COLUMNS: Record<string, string> = {
  name: 'name',
  status: 'status',
  website: 'website',
  applicationUrl: 'application_url',
  loginUrl: 'login_url',
  logo: 'logo',
  logoUrl: 'logo_url',
  address: 'address',
  timezone: 'timezone',
  dateFormat: 'date_format',
  timeFormat: 'time_format',
  currency: 'currency',
  creatorName: 'creator_name',
  creatorEmail: 'creator_email',
  isReseller: 'is_reseller',
};

// alias is not in COLUMNS (toColumns): only the account routes set it, one account at a time (uniqueness → 409).
const INSERT_COLUMNS = [
  'tenant_id',
  'id',
  'parent_tenant_id',
  'metadata',
  'is_reseller',
  'alias',
  ...Object.values(COLUMNS).filter((c) => c !== 'is_reseller'),
];
const RECORD_TYPES = INSERT_COLUMNS.map(
  (c) => `${c} ${c === 'metadata' ? 'jsonb' : c === 'is_reseller' ? 'boolean' : c === 'id' ? 'uuid' : 'text'}`,
).join(', ');

/**
 * Inserts accounts in one statement; an id held by a removed account is reactivated with every field replaced
 * (defaults for what the caller left out). Returns the ids written: an id missing from the answer is live already.
 */
export async function insertAccounts(db: Queryable, rows: NewTenant[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const full = rows.map((r) =>
    Object.fromEntries(
      INSERT_COLUMNS.map((c) => [c, r[c] ?? (c === 'metadata' ? {} : c === 'is_reseller' ? false : null)]),
    ),
  );
  const cols = INSERT_COLUMNS.join(', ');
  const { rows: written } = await db.query<{ tenant_id: string }>(
    `INSERT INTO tenants (${cols})
     SELECT ${cols} FROM jsonb_to_recordset($1::jsonb) AS x(${RECORD_TYPES})
     ON CONFLICT (tenant_id) DO UPDATE SET
       ${INSERT_COLUMNS.filter((c) => c !== 'tenant_id')
         .map((c) => `${c} = EXCLUDED.${c}`)
         .join(', ')},
       sub_account_access_type = 'defaultOff', created_at = now(), updated_at = now(), deleted_at = NULL
     WHERE tenants.deleted_at IS NOT NULL
     RETURNING tenant_id`,
    [JSON.stringify(full)],
  );
  return new Set(written.map((r) => r.tenant_id));
}

/** A live account; `lock` takes a row lock for the rest of the transaction (a parent must not vanish under a child). */
export async function findLive(
  db: Queryable,
  tenantId: string,
  lock?: 'FOR SHARE' | 'FOR UPDATE',
): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `SELECT * FROM tenants WHERE tenant_id = $1 AND deleted_at IS NULL ${lock ?? ''}`,
    [tenantId],
  );
  return rows[0];
}

/** The live account holding an alias (compared without regard to case). */
export async function findLiveByAlias(db: Queryable, alias: string): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    'SELECT * FROM tenants WHERE lower(alias) = lower($1) AND alias IS NOT NULL AND deleted_at IS NULL',
    [alias],
  );
  return rows[0];
}

/** The live accounts holding any of these aliases: lower-cased alias → tenant id. */
export async function aliasHolders(db: Queryable, aliases: string[]): Promise<Map<string, string>> {
  if (aliases.length === 0) return new Map();
  const { rows } = await db.query<{ alias: string; tenant_id: string }>(
    'SELECT lower(alias) AS alias, tenant_id FROM tenants WHERE lower(alias) = ANY($1::text[]) AND deleted_at IS NULL',
    [aliases.map((a) => a.toLowerCase())],
  );
  return new Map(rows.map((r) => [r.alias, r.tenant_id]));
}

/** Whether the id is held by a removed account (soft-deleted row); the row is locked until the transaction ends. */
export async function isRemoved(db: Queryable, tenantId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM tenants WHERE tenant_id = $1 AND deleted_at IS NOT NULL FOR UPDATE', [
    tenantId,
  ]);
  return rows.length > 0;
}

export async function liveIds(db: Queryable, tenantIds: string[]): Promise<Set<string>> {
  if (tenantIds.length === 0) return new Set();
  const { rows } = await db.query<{ tenant_id: string }>(
    'SELECT tenant_id FROM tenants WHERE tenant_id = ANY($1::text[]) AND deleted_at IS NULL',
    [tenantIds],
  );
  return new Set(rows.map((r) => r.tenant_id));
}

/** Sets the given columns (already mapped from API names) and returns the updated row. */
export async function updateColumns(
  db: Queryable,
  tenantId: string,
  values: Record<string, unknown>,
): Promise<TenantRow | undefined> {
  const cols = Object.keys(values);
  const sets = cols.map((c, i) => `${c} = $${i + 2}`);
  const { rows } = await db.query<TenantRow>(
    `UPDATE tenants SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE tenant_id = $1 AND deleted_at IS NULL RETURNING *`,
    [tenantId, ...cols.map((c) => (c === 'metadata' ? JSON.stringify(values[c]) : values[c]))],
  );
  return rows[0];
}

export async function mergeMetadata(
  db: Queryable,
  tenantId: string,
  patch: Record<string, unknown>,
): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `UPDATE tenants SET metadata = metadata || $2::jsonb, updated_at = now() WHERE tenant_id = $1 AND deleted_at IS NULL RETURNING *`,
    [tenantId, JSON.stringify(patch)],
  );
  return rows[0];
}

export async function removeMetadataKey(db: Queryable, tenantId: string, key: string): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `UPDATE tenants SET metadata = metadata - $2, updated_at = now()
     WHERE tenant_id = $1 AND deleted_at IS NULL AND metadata ? $2 RETURNING *`,
    [tenantId, key],
  );
  return rows[0];
}

/** Marks the account removed and moves its direct children to its parent (or to the top). Row locked first. */
export async function softDelete(
  db: Queryable,
  tenantId: string,
): Promise<(TenantRow & { movedChildren: string[]; formerParent: string | null }) | undefined> {
  const { rows } = await db.query<TenantRow>(
    'SELECT * FROM tenants WHERE tenant_id = $1 AND deleted_at IS NULL FOR UPDATE',
    [tenantId],
  );
  const row = rows[0];
  if (!row) return undefined;
  // The moved children are answered so that the caller can emit account.moved for each.
  const { rows: moved } = await db.query<{ tenant_id: string }>(
    'UPDATE tenants SET parent_tenant_id = $2, updated_at = now() WHERE parent_tenant_id = $1 AND deleted_at IS NULL RETURNING tenant_id',
    [tenantId, row.parent_tenant_id],
  );
  const { rows: deleted } = await db.query<TenantRow>(
    'UPDATE tenants SET deleted_at = now(), updated_at = now(), parent_tenant_id = NULL WHERE tenant_id = $1 RETURNING *',
    [tenantId],
  );
  return { ...deleted[0], movedChildren: moved.map((r) => r.tenant_id).sort(), formerParent: row.parent_tenant_id };
}
