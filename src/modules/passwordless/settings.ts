import type { Queryable } from '../../storage/db.ts';

/** Environment-wide settings of the sign-in flows (table `signin_flow_settings`), with built-in defaults. */
export interface StrategySettings {
  strategy: 'link' | 'code';
  /** Minutes a link or code stays valid. */
  codeExpiration: number;
}
export interface PasswordlessMethod {
  active: boolean;
  /** Minutes a link or code stays valid. */
  expiresInMinutes: number;
}
export interface PasswordlessSettings {
  EmailAndPassword: { active: boolean };
  MagicLink: PasswordlessMethod;
  Code: PasswordlessMethod;
  SmsCode: PasswordlessMethod;
}
export interface FlowSettings {
  activation: StrategySettings;
  invitation: StrategySettings;
  passwordless: PasswordlessSettings;
}

export const FLOW_DEFAULTS: FlowSettings = {
  activation: { strategy: 'link', codeExpiration: 24 * 60 },
  invitation: { strategy: 'link', codeExpiration: 7 * 24 * 60 },
  // SMS sign-in is on so that migrated users with phoneNumberType "auth" can sign in on day one; the email methods
  // are opt-in.
  passwordless: {
    EmailAndPassword: { active: true },
    MagicLink: { active: false, expiresInMinutes: 15 },
    Code: { active: false, expiresInMinutes: 10 },
    SmsCode: { active: true, expiresInMinutes: 10 },
  },
};

export async function readFlowSettings<K extends keyof FlowSettings>(q: Queryable, key: K): Promise<FlowSettings[K]> {
  const { rows } = await q.query<{ value: Record<string, unknown> }>(
    'SELECT value FROM signin_flow_settings WHERE key = $1',
    [key],
  );
  const stored = rows[0]?.value ?? {};
  const defaults = FLOW_DEFAULTS[key] as unknown as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [k, v] of Object.entries(stored)) {
    const d = defaults[k];
    merged[k] = d && typeof d === 'object' && v && typeof v === 'object' ? { ...d, ...v } : v;
  }
  return merged as unknown as FlowSettings[K];
}

/** Merges a partial document into the stored one (nested objects one level deep) and answers the result. */
export async function writeFlowSettings<K extends keyof FlowSettings>(
  q: Queryable,
  key: K,
  patch: Record<string, unknown>,
): Promise<FlowSettings[K]> {
  const current = (await readFlowSettings(q, key)) as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const c = current[k];
    current[k] = c && typeof c === 'object' && v && typeof v === 'object' ? { ...c, ...v } : v;
  }
  await q.query(
    `INSERT INTO signin_flow_settings (key, value) VALUES ($1, $2::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [key, JSON.stringify(current)],
  );
  return current as unknown as FlowSettings[K];
}
