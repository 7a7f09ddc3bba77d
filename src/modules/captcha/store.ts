import type { Queryable } from '../../storage/db.ts';

export interface CaptchaPolicyRow {
  id: string;
  site_key: string;
  secret_key_enc: string;
  enabled: boolean;
  min_score: number;
  ignored_emails: string[];
  created_at: Date;
  updated_at: Date;
}

export interface CaptchaPolicyValues {
  site_key: string;
  secret_key_enc: string;
  enabled: boolean;
  min_score: number;
  /** Undefined keeps the stored list (update only). */
  ignored_emails?: string[];
}

const COLUMNS = 'id, site_key, secret_key_enc, enabled, min_score, ignored_emails, created_at, updated_at';

export async function get(q: Queryable): Promise<CaptchaPolicyRow | undefined> {
  const { rows } = await q.query<CaptchaPolicyRow>(`SELECT ${COLUMNS} FROM captcha_policies`);
  return rows[0];
}

/** The public site key of the policy when it is enabled (never the secret). */
export async function enabledSiteKey(q: Queryable): Promise<string | undefined> {
  const { rows } = await q.query<{ site_key: string }>('SELECT site_key FROM captcha_policies WHERE enabled');
  return rows[0]?.site_key || undefined;
}

/** Inserts the policy; undefined when one already exists. */
export async function insert(q: Queryable, id: string, v: CaptchaPolicyValues): Promise<CaptchaPolicyRow | undefined> {
  const { rows } = await q.query<CaptchaPolicyRow>(
    `INSERT INTO captcha_policies (id, site_key, secret_key_enc, enabled, min_score, ignored_emails)
     VALUES ($1, $2, $3, $4, $5, $6::text[]) ON CONFLICT (singleton) DO NOTHING RETURNING ${COLUMNS}`,
    [id, v.site_key, v.secret_key_enc, v.enabled, v.min_score, v.ignored_emails ?? []],
  );
  return rows[0];
}

/** Replaces the policy, creating it when none exists (`id` is used only then); a null list keeps the stored one. */
export async function upsert(q: Queryable, id: string, v: CaptchaPolicyValues): Promise<CaptchaPolicyRow> {
  const { rows } = await q.query<CaptchaPolicyRow>(
    `INSERT INTO captcha_policies (id, site_key, secret_key_enc, enabled, min_score, ignored_emails)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6::text[], '{}'))
     ON CONFLICT (singleton) DO UPDATE SET site_key = EXCLUDED.site_key, secret_key_enc = EXCLUDED.secret_key_enc,
       enabled = EXCLUDED.enabled, min_score = EXCLUDED.min_score,
       ignored_emails = COALESCE($6::text[], captcha_policies.ignored_emails), updated_at = now()
     RETURNING ${COLUMNS}`,
    [id, v.site_key, v.secret_key_enc, v.enabled, v.min_score, v.ignored_emails ?? null],
  );
  return rows[0];
}
