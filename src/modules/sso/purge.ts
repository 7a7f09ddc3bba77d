import type { PurgeRule } from '../../jobs/purge.ts';

/** Housekeeping of SSO / social flow state (single use, 10 minutes) and SAML assertion ids past their NotOnOrAfter. */
export const ssoPurgeRules: PurgeRule[] = [
  { name: 'sso_flow_states', table: 'sso_flow_states', where: "expires_at < now() - interval '1 hour'" },
  { name: 'sso_assertions', table: 'sso_assertions', where: 'expires_at < now()' },
];
