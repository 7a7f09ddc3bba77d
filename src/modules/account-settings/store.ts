import type { Queryable } from '../../storage/db.ts';
import { accountTablesSql, setLiveColumns } from '../tenants/index.ts';

/**
 * The settings columns of a live account row (the accounts module owns the table and its statements; this module
 * reads and sets these only).
 */
export interface SettingsRow {
  tenant_id: string;
  application_url: string | null;
  login_url: string | null;
  address: string | null;
  timezone: string | null;
  date_format: string | null;
  time_format: string | null;
  currency: string | null;
  logo: string | null;
}

export type PublicSettingsRow = Pick<SettingsRow, 'tenant_id' | 'application_url' | 'login_url'>;

/** API field → column, for every field a settings update may set (`name` included). The only columns written here. */
export const COLUMNS = {
  name: 'name',
  applicationUrl: 'application_url',
  loginUrl: 'login_url',
  address: 'address',
  timezone: 'timezone',
  dateFormat: 'date_format',
  timeFormat: 'time_format',
  currency: 'currency',
  logo: 'logo',
} as const;

export type SettingsField = keyof typeof COLUMNS;
export type SettingsColumn = (typeof COLUMNS)[SettingsField];

const WRITABLE = new Set<string>(Object.values(COLUMNS));
const SETTINGS_SQL =
  'tenant_id, application_url, login_url, address, timezone, date_format, time_format, currency, logo';
const PUBLIC_SQL = 'tenant_id, application_url, login_url';

export async function findSettings(db: Queryable, tenantId: string): Promise<SettingsRow | undefined> {
  const { rows } = await db.query<SettingsRow>(
    `SELECT ${SETTINGS_SQL} FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1 AND deleted_at IS NULL`,
    [tenantId],
  );
  return rows[0];
}

export async function findPublicSettings(db: Queryable, tenantId: string): Promise<PublicSettingsRow | undefined> {
  const { rows } = await db.query<PublicSettingsRow>(
    `SELECT ${PUBLIC_SQL} FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1 AND deleted_at IS NULL`,
    [tenantId],
  );
  return rows[0];
}

/**
 * Sets the given settings columns of a live account in one statement (so a failed update changes nothing) and returns
 * the settings after it; undefined when no live account has this id. Column names come from `COLUMNS` only.
 */
export async function updateSettings(
  db: Queryable,
  tenantId: string,
  values: Partial<Record<SettingsColumn, string | null>>,
): Promise<SettingsRow | undefined> {
  const cols = Object.keys(values);
  if (cols.length === 0) throw new Error('updateSettings needs at least one column');
  for (const c of cols) if (!WRITABLE.has(c)) throw new Error(`updateSettings cannot write column ${c}`);
  // The accounts module's update of a live row (its whole row after: the settings columns among them).
  return setLiveColumns(db, tenantId, values);
}
