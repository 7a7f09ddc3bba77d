/**
 * Which module owns each table: only that module's code may name the table in SQL (scripts/check-modules.ts).
 * Every table a migration creates must be listed. `platform` is the code outside src/modules (jobs, storage).
 */
const OWNED: Record<string, string[]> = {
  'account-migration': ['migrations'],
  'api-tokens': ['api_token_refresh_tokens', 'api_tokens', 'token_acts'],
  'approval-flows': ['approval_flow_actions', 'approval_flow_executions', 'approval_flows'],
  audit: ['audit_chain', 'audit_log', 'audit_staging'],
  auth: ['refresh_tokens', 'session_policies', 'sessions', 'sign_in_decoys'],
  captcha: ['captcha_policies'],
  limits: ['rate_limit_counters'],
  'jwt-templates': ['jwt_templates', 'jwt_template_targeting'],
  credentials: [
    'lockout_policies',
    'password_history',
    'password_history_policies',
    'password_policies',
    'password_rotation_policies',
    'user_emails_policy',
  ],
  directory: ['scim_connections', 'scim_group_members', 'scim_groups', 'scim_users'],
  entitlements: [
    'entitlement_entity_actions',
    'entitlement_entity_relations',
    'entitlement_entity_types',
    'entitlement_feature_flags',
    'entitlement_features',
    'entitlement_grants',
    'entitlement_plan_features',
    'entitlement_plans',
    'entitlement_relation_assignments',
    'entitlement_routes',
    'entitlement_settings',
  ],
  environment: ['env_credentials', 'environment'],
  events: ['events'],
  groups: ['group_config', 'group_roles', 'group_users', 'user_groups'],
  invitations: ['tenant_invite_tokens', 'user_invitations'],
  keys: ['signing_keys'],
  messaging: [
    'dev_outbox',
    'email_templates',
    'mail_configurations',
    'message_deliveries',
    'sms_configurations',
    'sms_templates',
  ],
  mfa: [
    'mfa_codes',
    'mfa_config',
    'mfa_devices',
    'mfa_policies',
    'mfa_recovery_codes',
    'mfa_remembered_devices',
    'mfa_tokens',
  ],
  passwordless: ['one_time_codes', 'signin_flow_settings'],
  recovery: ['email_verification_tokens', 'password_reset_tokens', 'phone_codes', 'recovery_codes'],
  restrictions: ['domain_restriction_config', 'domain_restrictions', 'ip_restriction_config', 'ip_restrictions'],
  roles: ['permission_categories', 'permissions', 'role_permissions', 'roles'],
  signup: ['pending_activations'],
  social: ['social_providers', 'user_identities'],
  oidc: ['oidc_payloads'],
  sso: [
    'sso_assertions',
    'sso_configurations',
    'sso_domains',
    'sso_excluded_emails',
    'sso_flow_states',
    'sso_groups',
    'sso_settings',
    'sso_sp_keys',
  ],
  tenants: ['tenant_live_count', 'tenants'],
  'user-migration': [
    'application_clients',
    'application_credentials',
    'application_tenants',
    'applications',
    'user_application_active_tenants',
    'user_applications',
  ],
  'user-pools': ['user_source_apps', 'user_sources'],
  users: [
    'user_bulk_tasks',
    'user_emails',
    'user_phone_numbers',
    'user_roles',
    'user_tenants',
    'user_unlock_tokens',
    'users',
  ],
  webauthn: ['webauthn_challenges', 'webauthn_credentials'],
  // The fan-out lock of the event outbox: only the webhook dispatcher takes it.
  webhooks: ['event_dispatch', 'webhook_deliveries', 'webhooks'],
  // The job queue (src/jobs) and the schema version table (src/storage/migrate.ts, not created by a migration file).
  platform: ['jobs', 'schema_migrations'],
};

export const PLATFORM = 'platform';

/** Table name → owning module (a directory name under src/modules, or `platform`). */
export const TABLE_OWNERS: ReadonlyMap<string, string> = new Map(
  Object.entries(OWNED).flatMap(([owner, tables]) => tables.map((t) => [t, owner] as const)),
);
