-- Applications, second part (routes.md "Applications Settings" and "Users-applications Management").

-- The remaining fields of Update an Application. `metadata` is a JSON object; `app_host` a host name or URL.
ALTER TABLE applications ADD COLUMN description text NOT NULL DEFAULT '';
ALTER TABLE applications ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE applications ADD COLUMN app_host text NOT NULL DEFAULT '';
ALTER TABLE applications ADD COLUMN allow_dcr boolean NOT NULL DEFAULT false;

-- Which accounts may use an application (what MANAGED_ACCESS applications go by), each with its own access type.
CREATE TABLE application_tenants (
  app_id       uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  tenant_id    text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  access_type  text NOT NULL CHECK (access_type IN ('FREE_ACCESS', 'MANAGED_ACCESS')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, tenant_id)
);
CREATE INDEX application_tenants_tenant ON application_tenants (tenant_id, app_id);

-- Accounts are removed softly (tenants.deleted_at): the removal drops the account's assignments in the same statement,
-- so an account created again under the same id starts with none (the FK above covers a hard delete).
CREATE FUNCTION application_tenants_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM application_tenants WHERE tenant_id = NEW.tenant_id;
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_forget_application_tenants AFTER UPDATE OF deleted_at ON tenants
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION application_tenants_forget();

-- Client credentials of an application (its client id is the application id): a client secret and a shared secret,
-- each shown once when generated and kept as SHA-256 (hex) with its last four characters as a hint.
CREATE TABLE application_credentials (
  app_id                    uuid PRIMARY KEY REFERENCES applications (id) ON DELETE CASCADE,
  client_secret_hash        text,
  client_secret_hint        text,
  client_secret_created_at  timestamptz,
  shared_secret_hash        text,
  shared_secret_hint        text,
  shared_secret_created_at  timestamptz
);

-- Clients of an application (agents): a name, redirect URLs, free metadata and a secret kept like the credentials.
CREATE TABLE application_clients (
  id                 uuid PRIMARY KEY,
  app_id             uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  client_name        text NOT NULL,
  client_type        text NOT NULL,
  redirect_urls      jsonb NOT NULL DEFAULT '[]'::jsonb,
  external_metadata  jsonb,
  secret_hash        text NOT NULL,
  secret_hint        text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX application_clients_app ON application_clients (app_id, created_at);

-- A user's active account per application. The user must be a member: leaving the account (or its removal, which
-- removes the memberships) drops the row.
CREATE TABLE user_application_active_tenants (
  user_id     uuid NOT NULL,
  app_id      uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  tenant_id   text COLLATE "C" NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, app_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX user_application_active_tenants_member ON user_application_active_tenants (tenant_id, user_id);
