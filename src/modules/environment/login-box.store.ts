import type { Queryable } from '../../storage/db.ts';

/**
 * Read-only SQL over the environment-wide configuration that other modules own (MFA factors, social providers,
 * SSO connections, email/SMS providers and templates, the captcha policy), for what a login box may show. Selects
 * only on/off facts, types and the public captcha site key: never a secret column (sealed passwords, tokens, the
 * captcha secret, OIDC client secrets). One statement, plus one for the captcha policy.
 */
export interface LoginBoxRow {
  mfa_authenticator: boolean;
  mfa_sms: boolean;
  mfa_email: boolean;
  social: string[];
  sso: boolean;
  mail: boolean;
  sms: boolean;
  inactive_email: string[];
  inactive_sms: string[];
}

const FACTS_SQL = `
  SELECT coalesce((SELECT authenticator_active FROM mfa_config WHERE id), true) AS mfa_authenticator,
         coalesce((SELECT sms_active FROM mfa_config WHERE id), true) AS mfa_sms,
         coalesce((SELECT email_active FROM mfa_config WHERE id), false) AS mfa_email,
         coalesce((SELECT array_agg(type ORDER BY type) FROM social_providers WHERE active), '{}'::text[]) AS social,
         EXISTS (SELECT 1 FROM sso_configurations s
                   JOIN tenants t ON t.tenant_id = s.tenant_id AND t.deleted_at IS NULL
                  WHERE s.enabled) AS sso,
         EXISTS (SELECT 1 FROM mail_configurations) AS mail,
         EXISTS (SELECT 1 FROM sms_configurations) AS sms,
         coalesce((SELECT array_agg(type ORDER BY type) FROM email_templates WHERE NOT active), '{}'::text[]) AS inactive_email,
         coalesce((SELECT array_agg(type ORDER BY type) FROM sms_templates WHERE NOT active), '{}'::text[]) AS inactive_sms`;

export async function readFacts(q: Queryable): Promise<LoginBoxRow> {
  const { rows } = await q.query<LoginBoxRow>(FACTS_SQL);
  return rows[0];
}

/** The captcha site key when an enabled captcha policy exists (the captcha module's table, read-only). */
export async function readCaptchaSiteKey(q: Queryable): Promise<string | undefined> {
  const { rows } = await q.query<{ site_key: string }>('SELECT site_key FROM captcha_policies WHERE enabled');
  return rows[0]?.site_key || undefined;
}
