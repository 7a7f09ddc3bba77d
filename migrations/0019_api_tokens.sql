-- Machine access: client-credentials API tokens, long-lived access tokens, their refresh tokens,
-- and the record of impersonations and delegations.

-- One row per machine token. kind 'client' = client-credentials API token (secret stored as SHA-256);
-- kind 'access' = long-lived access token (a signed JWT handed out once; only its id and state are kept).
-- user_id NULL = account token; set = a user's personal token (FK to the membership: leaving the account or
-- deleting the user removes the token). Account removal deletes the account's rows through the removal hook.
CREATE TABLE api_tokens (
  tenant_id          text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id                 uuid NOT NULL,
  kind               text NOT NULL CHECK (kind IN ('client', 'access')),
  user_id            uuid,
  secret_hash        text,
  description        text NOT NULL DEFAULT '',
  metadata           jsonb NOT NULL DEFAULT '{}'::jsonb,
  role_ids           uuid[] NOT NULL DEFAULT '{}',
  permission_ids     uuid[] NOT NULL DEFAULT '{}',
  created_by_user_id text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
-- The exchange and the guard look a token up by its id alone (the client sends no account).
CREATE UNIQUE INDEX api_tokens_by_id ON api_tokens (id);
CREATE INDEX api_tokens_by_owner ON api_tokens (tenant_id, user_id, kind, created_at);

-- Refresh tokens of client-credentials exchanges: SHA-256 of 256 random bits, deleted when rotated.
-- At most 100 per API token are kept (the oldest, by seq, goes).
CREATE TABLE api_token_refresh_tokens (
  token_hash    text PRIMARY KEY,
  tenant_id     text COLLATE "C" NOT NULL,
  api_token_id  uuid NOT NULL,
  seq           bigserial NOT NULL,
  expires_at    timestamptz NOT NULL,
  FOREIGN KEY (tenant_id, api_token_id) REFERENCES api_tokens (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX api_token_refresh_by_token ON api_token_refresh_tokens (tenant_id, api_token_id, seq);

-- Who acted as whom: impersonations (vendor or permitted admin) and delegations (an API token on behalf of a user).
CREATE TABLE token_acts (
  tenant_id   text COLLATE "C" NOT NULL,
  id          uuid NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('impersonation', 'delegation')),
  user_id     uuid NOT NULL,
  actor_type  text NOT NULL,
  actor_id    text NOT NULL,
  reason      text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX token_acts_by_id ON token_acts (id);
CREATE INDEX token_acts_by_time ON token_acts (tenant_id, created_at);

-- Built-in permissions Gatehouse checks for machine access; the seeded admin role manages account tokens.
-- Impersonation is not given to any role: a vendor grants it deliberately.
INSERT INTO permissions (id, key, name, description, category_id, fe_permission) VALUES
  ('3f1c8a52-6b0e-4c8e-9a51-0d6f4e7b2a01', 'fe.secure.read.tenantApiTokens', 'Read API tokens', 'List the account''s API and access tokens', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f1c8a52-6b0e-4c8e-9a51-0d6f4e7b2a02', 'fe.secure.write.tenantApiTokens', 'Create API tokens', 'Create and change the account''s API and access tokens', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f1c8a52-6b0e-4c8e-9a51-0d6f4e7b2a03', 'fe.secure.delete.tenantApiTokens', 'Delete API tokens', 'Delete the account''s API and access tokens', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f1c8a52-6b0e-4c8e-9a51-0d6f4e7b2a04', 'fe.secure.impersonate.users', 'Impersonate users', 'Act as another user of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true)
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT r.id, p.id FROM roles r, permissions p
  WHERE r.id = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9' AND p.key IN ('fe.secure.read.tenantApiTokens', 'fe.secure.write.tenantApiTokens', 'fe.secure.delete.tenantApiTokens')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT r.id, p.id FROM roles r, permissions p
  WHERE r.id = 'c784abeb-f295-45fb-84ed-19a1652cfb43' AND p.key = 'fe.secure.read.tenantApiTokens'
ON CONFLICT DO NOTHING;
