-- Users are environment-wide identities; membership of accounts is user_tenants; roles are per membership.
CREATE TABLE users (
  id                   uuid PRIMARY KEY,
  email                text NOT NULL,
  username             text,
  name                 text NOT NULL DEFAULT '',
  profile_picture_url  text,
  external_id          text,
  verified             boolean NOT NULL DEFAULT false,
  mfa_enrolled         boolean NOT NULL DEFAULT false,
  mfa_bypass           boolean NOT NULL DEFAULT false,
  provider             text NOT NULL DEFAULT 'local',
  managed_by           text NOT NULL DEFAULT 'gatehouse' CHECK (managed_by IN ('gatehouse', 'scim2', 'external')),
  metadata             jsonb NOT NULL DEFAULT '{}'::jsonb,
  vendor_metadata      jsonb NOT NULL DEFAULT '{}'::jsonb,
  password_hash        text,
  is_locked            boolean NOT NULL DEFAULT false,
  locked_until         timestamptz,
  failed_attempts      integer NOT NULL DEFAULT 0,
  invisible            boolean NOT NULL DEFAULT false,
  super_user           boolean NOT NULL DEFAULT false,
  active_tenant_id     text COLLATE "C",
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  last_login           timestamptz
);
-- Emails are stored lower-cased; one user per email in the environment.
CREATE UNIQUE INDEX users_email ON users (email);
CREATE UNIQUE INDEX users_username ON users (lower(username)) WHERE username IS NOT NULL;
CREATE INDEX users_created ON users (created_at, id);

-- Phone numbers are identifiers: a user may hold several (new ones are added, not replaced); unique in the environment.
CREATE TABLE user_phone_numbers (
  phone_number  text PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  is_primary    boolean NOT NULL DEFAULT false,
  verified      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_phone_numbers_user ON user_phone_numbers (user_id);

CREATE TABLE user_tenants (
  tenant_id                   text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  user_id                     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  is_disabled                 boolean NOT NULL DEFAULT false,
  temporary_expiration_date   timestamptz,
  sub_account_access_allowed  boolean NOT NULL DEFAULT false,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX user_tenants_user ON user_tenants (user_id);

CREATE TABLE user_roles (
  tenant_id  text COLLATE "C" NOT NULL,
  user_id    uuid NOT NULL,
  role_id    uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  PRIMARY KEY (tenant_id, user_id, role_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX user_roles_user ON user_roles (user_id);
CREATE INDEX user_roles_role ON user_roles (role_id);
