-- Directory: SCIM 2.0 provisioning connections and the directory they write.

-- A connection of an account; the SCIM routes name it by id. Its bearer token is stored as SHA-256 only.
CREATE TABLE scim_connections (
  tenant_id                  text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id                         uuid NOT NULL,
  connection_name            text NOT NULL DEFAULT '',
  source                     text NOT NULL,
  sync_to_user_management    boolean NOT NULL DEFAULT true,
  metadata                   jsonb NOT NULL DEFAULT '{}'::jsonb,
  token_hash                 text NOT NULL,
  -- Group-to-role mapping: [{"group": "<displayName>", "roleIds": ["<uuid>", ...]}], group names case-insensitive.
  group_roles                jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_sync                  timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
-- The SCIM routes carry only the connection id.
CREATE UNIQUE INDEX scim_connections_id ON scim_connections (id);

-- Users of a connection's directory. `data` holds the SCIM attributes (core and extensions) as received, after
-- normalisation; the columns below repeat the ones filters and sorts use most, so those hit indexes.
CREATE TABLE scim_users (
  tenant_id        text COLLATE "C" NOT NULL,
  connection_id    uuid NOT NULL,
  id               uuid NOT NULL,
  user_name        text COLLATE "C" NOT NULL,
  external_id      text COLLATE "C",
  display_name     text COLLATE "C",
  email            text COLLATE "C",
  active           boolean NOT NULL DEFAULT true,
  data             jsonb NOT NULL DEFAULT '{}'::jsonb,
  version          integer NOT NULL DEFAULT 1,
  -- The Gatehouse user this directory user is (with syncToUserManagement), and whether the connection created it.
  user_id          uuid,
  owns_user        boolean NOT NULL DEFAULT false,
  -- Roles the group-to-role mapping granted in the account; removed again when the mapping no longer gives them.
  granted_role_ids uuid[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, connection_id, id),
  FOREIGN KEY (tenant_id, connection_id) REFERENCES scim_connections (tenant_id, id) ON DELETE CASCADE
);
-- userName is unique per connection, case-insensitively (RFC 7643: caseExact false); also serves eq/sw filters.
CREATE UNIQUE INDEX scim_users_user_name ON scim_users (tenant_id, connection_id, (lower(user_name)));
CREATE INDEX scim_users_external_id ON scim_users (tenant_id, connection_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX scim_users_email ON scim_users (tenant_id, connection_id, (lower(email))) WHERE email IS NOT NULL;
CREATE INDEX scim_users_created ON scim_users (tenant_id, connection_id, created_at, id);
CREATE INDEX scim_users_user ON scim_users (user_id) WHERE user_id IS NOT NULL;

CREATE TABLE scim_groups (
  tenant_id      text COLLATE "C" NOT NULL,
  connection_id  uuid NOT NULL,
  id             uuid NOT NULL,
  display_name   text COLLATE "C" NOT NULL,
  external_id    text COLLATE "C",
  data           jsonb NOT NULL DEFAULT '{}'::jsonb,
  version        integer NOT NULL DEFAULT 1,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, connection_id, id),
  FOREIGN KEY (tenant_id, connection_id) REFERENCES scim_connections (tenant_id, id) ON DELETE CASCADE
);
-- Group names are unique per connection (the group-to-role mapping names groups by displayName).
CREATE UNIQUE INDEX scim_groups_display_name ON scim_groups (tenant_id, connection_id, (lower(display_name)));
CREATE INDEX scim_groups_created ON scim_groups (tenant_id, connection_id, created_at, id);

CREATE TABLE scim_group_members (
  tenant_id      text COLLATE "C" NOT NULL,
  connection_id  uuid NOT NULL,
  group_id       uuid NOT NULL,
  user_id        uuid NOT NULL,
  PRIMARY KEY (tenant_id, connection_id, group_id, user_id),
  FOREIGN KEY (tenant_id, connection_id, group_id) REFERENCES scim_groups (tenant_id, connection_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, connection_id, user_id) REFERENCES scim_users (tenant_id, connection_id, id) ON DELETE CASCADE
);
CREATE INDEX scim_group_members_user ON scim_group_members (tenant_id, connection_id, user_id);

-- Self-service permissions for an account's own SCIM connections.
INSERT INTO permissions (id, key, name, description, category_id, fe_permission) VALUES
  ('3f0c2a8e-6a4b-4f5e-9d0a-6b1e2c3d4e51', 'fe.secure.read.scim', 'Read SCIM connections', 'Read the SCIM provisioning connections of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f0c2a8e-6a4b-4f5e-9d0a-6b1e2c3d4e52', 'fe.secure.write.scim', 'Edit SCIM connections', 'Create, change and rotate the tokens of the account''s SCIM connections', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('3f0c2a8e-6a4b-4f5e-9d0a-6b1e2c3d4e53', 'fe.secure.delete.scim', 'Remove SCIM connections', 'Remove the account''s SCIM connections', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true)
ON CONFLICT (key) DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9'::uuid, id FROM permissions WHERE key IN ('fe.secure.read.scim', 'fe.secure.write.scim', 'fe.secure.delete.scim')
  AND EXISTS (SELECT 1 FROM roles WHERE id = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'c784abeb-f295-45fb-84ed-19a1652cfb43'::uuid, id FROM permissions WHERE key = 'fe.secure.read.scim'
  AND EXISTS (SELECT 1 FROM roles WHERE id = 'c784abeb-f295-45fb-84ed-19a1652cfb43')
ON CONFLICT DO NOTHING;
