import type { Queryable } from '../../storage/db.ts';
import { deliveryFactsSql } from '../messaging/index.ts';

/**
 * Read-only SQL over the environment-wide configuration that other modules own (MFA factors, social providers,
 * SSO connections, email/SMS providers and templates), for what a login box may show: one statement, composed of
 * the owners' expressions. Selects only on/off facts and types: never a secret column (sealed passwords, tokens,
 * OIDC client secrets).
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

/** SQL of modules built on this one (they import the environment), given through src/context.ts. */
export interface LoginBoxSql {
  /** The active social provider types, sorted (text[]). */
  socialProviders: string;
  /** Which second factors are offered (three booleans). */
  mfaFactors: { authenticator: string; sms: string; email: string };
  /** Whether SSO is offered (boolean). */
  ssoOffered: string;
}

export const factsSql = (given: LoginBoxSql) => `
  SELECT ${given.mfaFactors.authenticator} AS mfa_authenticator,
         ${given.mfaFactors.sms} AS mfa_sms,
         ${given.mfaFactors.email} AS mfa_email,
         ${given.socialProviders} AS social,
         ${given.ssoOffered} AS sso,
         ${deliveryFactsSql.mailConfigured} AS mail,
         ${deliveryFactsSql.smsConfigured} AS sms,
         ${deliveryFactsSql.inactiveEmailTemplates} AS inactive_email,
         ${deliveryFactsSql.inactiveSmsTemplates} AS inactive_sms`;

export async function readFacts(q: Queryable, text: string): Promise<LoginBoxRow> {
  const { rows } = await q.query<LoginBoxRow>(text);
  return rows[0];
}
