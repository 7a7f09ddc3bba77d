-- User groups, IP restrictions, email-domain restrictions and user pools (user sources).

-- User groups of an account. Names are unique per account, case-insensitively.
CREATE TABLE user_groups (
  tenant_id    text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id           uuid NOT NULL,
  name         text NOT NULL,
  color        text NOT NULL DEFAULT '',
  description  text NOT NULL DEFAULT '',
  metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  managed_by   text NOT NULL DEFAULT 'gatehouse' CHECK (managed_by IN ('gatehouse', 'scim2', 'external')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX user_groups_name ON user_groups (tenant_id, (lower(name) COLLATE "C"));

-- Members: only members of the group's account (the foreign key to user_tenants), so leaving the account or being
-- deleted removes the user from its groups.
CREATE TABLE group_users (
  tenant_id   text COLLATE "C" NOT NULL,
  group_id    uuid NOT NULL,
  user_id     uuid NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, group_id, user_id),
  FOREIGN KEY (tenant_id, group_id) REFERENCES user_groups (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX group_users_user ON group_users (tenant_id, user_id);
CREATE INDEX group_users_by_user ON group_users (user_id);

-- Roles a group gives its members in the group's account.
CREATE TABLE group_roles (
  tenant_id  text COLLATE "C" NOT NULL,
  group_id   uuid NOT NULL,
  role_id    uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  PRIMARY KEY (tenant_id, group_id, role_id),
  FOREIGN KEY (tenant_id, group_id) REFERENCES user_groups (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX group_roles_role ON group_roles (role_id);

-- The environment's groups configuration (one row).
CREATE TABLE group_config (
  singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  enabled        boolean NOT NULL DEFAULT true,
  roles_enabled  boolean NOT NULL DEFAULT true,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO group_config (singleton) VALUES (true);

-- IP restrictions per account: which list is enforced (strategy) and whether enforcement is on.
CREATE TABLE ip_restriction_config (
  tenant_id   text COLLATE "C" PRIMARY KEY REFERENCES tenants (tenant_id),
  strategy    text NOT NULL CHECK (strategy IN ('ALLOW', 'BLOCK')),
  is_active   boolean NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- Rules: `ip` is the canonical text of an address or CIDR range (network address, no host bits).
CREATE TABLE ip_restrictions (
  tenant_id    text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id           uuid NOT NULL,
  ip           text COLLATE "C" NOT NULL,
  description  text NOT NULL DEFAULT '',
  strategy     text NOT NULL CHECK (strategy IN ('ALLOW', 'BLOCK')),
  is_active    boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX ip_restrictions_rule ON ip_restrictions (tenant_id, strategy, ip);

-- Email-domain restrictions: scope '' is the environment, else a tenant id.
CREATE TABLE domain_restriction_config (
  scope                 text COLLATE "C" PRIMARY KEY,
  active                boolean NOT NULL,
  list_type             text NOT NULL CHECK (list_type IN ('ALLOW', 'BLOCK')),
  block_public_domains  boolean NOT NULL DEFAULT false,
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE domain_restrictions (
  scope       text COLLATE "C" NOT NULL,
  id          uuid NOT NULL,
  domain      text COLLATE "C" NOT NULL,
  type        text NOT NULL CHECK (type IN ('ALLOW', 'BLOCK')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, id)
);
CREATE UNIQUE INDEX domain_restrictions_rule ON domain_restrictions (scope, type, domain);

-- User sources (user pools) of the environment. The built-in pool is a seeded row that cannot be removed.
-- `configuration` holds the non-secret settings; secret fields are sealed with the key-encryption key in `secrets_enc`.
CREATE TABLE user_sources (
  id             uuid PRIMARY KEY,
  name           text NOT NULL,
  type           text NOT NULL,
  description    text NOT NULL DEFAULT '',
  idx            integer NOT NULL DEFAULT 0,
  configuration  jsonb NOT NULL DEFAULT '{}'::jsonb,
  secrets_enc    text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO user_sources (id, name, type, description, idx) VALUES
  ('00000000-0000-4000-8000-00000000b001', 'Gatehouse', 'gatehouse', 'The built-in user pool', 0);
-- An application takes its users from at most one source; an application without a row uses the built-in pool.
CREATE TABLE user_source_apps (
  app_id     uuid PRIMARY KEY REFERENCES applications (id) ON DELETE CASCADE,
  source_id  uuid NOT NULL REFERENCES user_sources (id) ON DELETE CASCADE
);
CREATE INDEX user_source_apps_source ON user_source_apps (source_id);
