-- SSO per account (SAML 2.0, OIDC) and social login.

-- One identity provider connection of an account. Secrets (OIDC client secret) sealed with the KEK.
CREATE TABLE sso_configurations (
  tenant_id        text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id               uuid NOT NULL,
  type             text NOT NULL CHECK (type IN ('saml', 'oidc')),
  enabled          boolean NOT NULL DEFAULT true,
  -- SAML: IdP SSO URL, IdP entity id, IdP signing certificates (PEM bodies), whether AuthnRequests are signed.
  sso_endpoint     text NOT NULL DEFAULT '',
  idp_entity_id    text NOT NULL DEFAULT '',
  idp_certs        text[] NOT NULL DEFAULT '{}',
  sign_request     boolean NOT NULL DEFAULT false,
  sp_entity_id     text NOT NULL DEFAULT '',
  -- OIDC: issuer, client id, sealed client secret, scopes.
  oidc_issuer      text NOT NULL DEFAULT '',
  oidc_client_id   text NOT NULL DEFAULT '',
  oidc_secret_enc  text,
  oidc_scopes      text NOT NULL DEFAULT 'openid email profile',
  -- Which IdP attribute (or claim) carries groups, for the group-to-role mapping.
  group_attribute  text NOT NULL DEFAULT 'groups',
  default_role_ids text[] NOT NULL DEFAULT '{}',
  config_metadata  jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX sso_configurations_id ON sso_configurations (id);

-- Email domains claimed by an account's configuration; pre-login routes a verified domain to its IdP.
CREATE TABLE sso_domains (
  tenant_id    text COLLATE "C" NOT NULL,
  id           uuid NOT NULL,
  config_id    uuid NOT NULL,
  domain       text NOT NULL,
  txt_record   text NOT NULL,
  validated    boolean NOT NULL DEFAULT false,
  validated_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, config_id) REFERENCES sso_configurations (tenant_id, id) ON DELETE CASCADE
);
-- A validated domain routes to one account only.
CREATE UNIQUE INDEX sso_domains_validated ON sso_domains (domain) WHERE validated;
CREATE INDEX sso_domains_domain ON sso_domains (domain);

-- IdP group (or attribute value) to roles of the account.
CREATE TABLE sso_groups (
  tenant_id  text COLLATE "C" NOT NULL,
  id         uuid NOT NULL,
  config_id  uuid NOT NULL,
  grp        text NOT NULL,
  role_ids   text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, config_id) REFERENCES sso_configurations (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX sso_groups_name ON sso_groups (tenant_id, config_id, grp);

-- Emails that sign in with a password even when their domain has SSO (per account).
CREATE TABLE sso_excluded_emails (
  tenant_id  text COLLATE "C" NOT NULL,
  email      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, email)
);

-- One in-flight sign-in (SAML, OIDC or social): keyed by sha256(state); single use; expires.
CREATE TABLE sso_flow_states (
  state_hash    text PRIMARY KEY,
  kind          text NOT NULL,
  tenant_id     text COLLATE "C",
  config_id     text,
  provider      text,
  request_id    text,
  nonce         text,
  verifier_enc  text,
  redirect_uri  text,
  app_redirect  text,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_flow_states_expiry ON sso_flow_states (expires_at);

-- SAML assertion ids seen, kept until their NotOnOrAfter: a replayed assertion is refused.
CREATE TABLE sso_assertions (
  assertion_id text PRIMARY KEY,
  tenant_id    text COLLATE "C",
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sso_assertions_expiry ON sso_assertions (expires_at);

-- The environment's SAML service-provider key pair (signs AuthnRequests); the private key sealed with the KEK.
CREATE TABLE sso_sp_keys (
  id              integer PRIMARY KEY CHECK (id = 1),
  private_key_enc text NOT NULL,
  certificate     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Environment-wide SSO settings (domains policy, multiple SSO per domain).
CREATE TABLE sso_settings (
  id       integer PRIMARY KEY CHECK (id = 1),
  settings jsonb NOT NULL DEFAULT '{}'::jsonb
);

-- Social login providers (google, github, ... and custom OAuth 2.0 / OIDC providers), environment-wide.
CREATE TABLE social_providers (
  id            uuid PRIMARY KEY,
  type          text NOT NULL,
  custom        boolean NOT NULL DEFAULT false,
  active        boolean NOT NULL DEFAULT true,
  client_id     text NOT NULL,
  secret_enc    text,
  redirect_url  text NOT NULL DEFAULT '',
  scopes        text NOT NULL DEFAULT '',
  options       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX social_providers_type ON social_providers (type);

-- Permissions an account admin needs to manage the account's SSO (vendor tokens need none).
INSERT INTO permissions (id, key, name, description, category_id, fe_permission) VALUES
  ('3f0c2d7e-5b8a-4c51-9e0a-1d6f2b7c8a01', 'fe.secure.read.samlConfiguration', 'Read SSO', 'Read the SSO configurations, domains and group mappings of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f0c2d7e-5b8a-4c51-9e0a-1d6f2b7c8a02', 'fe.secure.write.samlConfiguration', 'Manage SSO', 'Configure the SSO of the account: identity providers, domains, default roles and group mappings', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true)
ON CONFLICT (key) DO NOTHING;
-- The seeded Admin role manages SSO; ReadOnly reads it (as for the other built-in permissions).
INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9'::uuid, id FROM permissions WHERE key IN ('fe.secure.read.samlConfiguration', 'fe.secure.write.samlConfiguration')
  AND EXISTS (SELECT 1 FROM roles WHERE id = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'c784abeb-f295-45fb-84ed-19a1652cfb43'::uuid, id FROM permissions WHERE key = 'fe.secure.read.samlConfiguration'
  AND EXISTS (SELECT 1 FROM roles WHERE id = 'c784abeb-f295-45fb-84ed-19a1652cfb43')
ON CONFLICT DO NOTHING;
