import { AppError } from '../../http/errors.ts';
import type { Db } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import { LIMITS, type AccountSettings, type PublicSettings, type UpdateSettings } from './schema.ts';
import * as store from './store.ts';

export interface AccountSettingsDeps {
  db: Db;
  /** The accounts module (settings are columns of its `tenants` rows). */
  tenants: TenantsService;
}

export function toSettings(r: store.SettingsRow): AccountSettings {
  return {
    tenantId: r.tenant_id,
    applicationUrl: r.application_url,
    loginUrl: r.login_url,
    address: r.address,
    timezone: r.timezone,
    dateFormat: r.date_format,
    timeFormat: r.time_format,
    currency: r.currency,
    logo: r.logo,
  };
}

export function toPublicSettings(r: store.PublicSettingsRow): PublicSettings {
  return { tenantId: r.tenant_id, applicationUrl: r.application_url, loginUrl: r.login_url };
}

// Control characters (C0 and DEL); addresses may still span lines.
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const CURRENCY = /^[A-Z]{3}$/;
const ZONE_SYNTAX = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const DATA_IMAGE =
  /^data:image\/(png|jpeg|gif|webp|svg\+xml|x-icon|vnd\.microsoft\.icon);base64,([A-Za-z0-9+/]+={0,2})$/;

let zoneNames: Map<string, string> | undefined;
/** Lower-case name → spelling, for the zones Intl lists (V8 leaves out UTC and some links, which Intl still accepts). */
function knownZones(): Map<string, string> {
  zoneNames ??= new Map([...Intl.supportedValuesOf('timeZone'), 'UTC'].map((z) => [z.toLowerCase(), z]));
  return zoneNames;
}

/**
 * A real IANA zone, returned in its listed spelling (`europe/berlin` → `Europe/Berlin`). Links Intl accepts but does
 * not list (`Asia/Kolkata`, `Etc/UTC`, `US/Eastern`) are kept as given; offsets (`+01:00`) and unknown names are not zones.
 */
export function normalizeTimeZone(value: string): string | undefined {
  if (!ZONE_SYNTAX.test(value)) return undefined;
  const listed = knownZones().get(value.toLowerCase());
  if (listed) return listed;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return value;
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL with a host and no credentials; a reason when it is not. */
function urlProblem(value: string): string | undefined {
  if (/\s/.test(value)) return 'must not contain whitespace';
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute http(s) URL, e.g. https://app.example.com';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `must use http or https, not ${u.protocol.slice(0, -1)}`;
  if (!u.hostname) return 'must name a host';
  if (u.username || u.password) return 'must not carry credentials (user:password@)';
  return undefined;
}

type Values = Partial<Record<store.SettingsColumn, string | null>>;

/**
 * Checks every given field and maps it to its column. A field that is absent (undefined) is left alone; null or a
 * string that is empty after trimming clears the setting; strings are stored trimmed. All problems are reported at
 * once, and nothing is written when there is one.
 */
export function settingsValues(body: UpdateSettings): Values {
  const values: Values = {};
  const problems: string[] = [];
  const fields: string[] = [];
  const fail = (field: string, rule: string) => {
    problems.push(`${field} ${rule}`);
    fields.push(field);
  };
  for (const [field, column] of Object.entries(store.COLUMNS) as [store.SettingsField, store.SettingsColumn][]) {
    const raw: unknown = (body as Record<string, unknown>)[field];
    if (raw === undefined) continue;
    if (raw !== null && typeof raw !== 'string') {
      fail(field, 'must be a string or null');
      continue;
    }
    const v = raw === null ? '' : raw.trim();
    if (v === '') {
      if (field === 'name') fail(field, 'cannot be cleared: it must be 1-255 characters');
      else values[column] = null;
      continue;
    }
    const problem = check(field, v);
    if (typeof problem === 'string') fail(field, problem);
    else values[column] = problem.value;
  }
  if (problems.length > 0) throw new AppError('VALIDATION', problems.join('; '), { fields });
  return values;
}

/** The rule of one field for a non-empty trimmed value: a reason, or the value to store. */
function check(field: store.SettingsField, v: string): string | { value: string } {
  switch (field) {
    case 'name':
      if (v.length > LIMITS.name) return `must be at most ${LIMITS.name} characters`;
      if (CONTROL.test(v)) return 'must not contain control characters';
      return { value: v };
    case 'applicationUrl':
    case 'loginUrl': {
      if (v.length > LIMITS.url) return `must be at most ${LIMITS.url} characters`;
      return urlProblem(v) ?? { value: v };
    }
    case 'logo': {
      if (v.length > LIMITS.logo) return `must be at most ${LIMITS.logo} characters`;
      if (/^data:/i.test(v)) {
        return DATA_IMAGE.test(v)
          ? { value: v }
          : 'must be a data URL of the form data:image/<png|jpeg|gif|webp|svg+xml|x-icon>;base64,<base64>';
      }
      if (v.length > LIMITS.url) return `must be at most ${LIMITS.url} characters when it is a URL`;
      const problem = urlProblem(v);
      return problem ? `must be an http(s) URL or a data:image URL; as a URL it ${problem}` : { value: v };
    }
    case 'timezone': {
      if (v.length > LIMITS.timezone) return `must be at most ${LIMITS.timezone} characters`;
      const zone = normalizeTimeZone(v);
      return zone
        ? { value: zone }
        : `must be an IANA time zone such as Europe/Berlin or UTC; ${JSON.stringify(v)} is not one`;
    }
    case 'currency':
      return CURRENCY.test(v) ? { value: v } : 'must be an ISO 4217 code of 3 upper-case letters, e.g. USD';
    case 'dateFormat':
    case 'timeFormat':
      if (v.length > LIMITS.format) return `must be at most ${LIMITS.format} characters`;
      if (CONTROL.test(v)) return 'must not contain control characters';
      return { value: v };
    case 'address':
      if (v.length > LIMITS.address) return `must be at most ${LIMITS.address} characters`;
      if (CONTROL_BUT_LINES.test(v)) return 'must not contain control characters other than line breaks and tabs';
      return { value: v };
  }
}

const notFound = (tenantId: string) => new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);

export type AccountSettingsService = ReturnType<typeof createAccountSettingsService>;

/** Account settings: a view of the settings columns of a live account, read and set as one unit. */
export function createAccountSettingsService(deps: AccountSettingsDeps) {
  const { db } = deps;

  return {
    async get(tenantId: string): Promise<AccountSettings> {
      const row = await store.findSettings(db, tenantId);
      if (!row) throw notFound(tenantId);
      return toSettings(row);
    },

    async getPublic(tenantId: string): Promise<PublicSettings> {
      const row = await store.findPublicSettings(db, tenantId);
      if (!row) throw notFound(tenantId);
      return toPublicSettings(row);
    },

    /** Validates the whole body first (400, nothing written), then sets the given settings in one statement. */
    async update(tenantId: string, body: UpdateSettings): Promise<AccountSettings> {
      const values = settingsValues(body ?? {});
      if (Object.keys(values).length === 0) {
        throw new AppError(
          'EMPTY_UPDATE',
          `The body must set at least one of: ${Object.keys(store.COLUMNS).join(', ')}`,
        );
      }
      const row = await store.updateSettings(db, tenantId, values);
      if (!row) throw notFound(tenantId);
      return toSettings(row);
    },
  };
}
