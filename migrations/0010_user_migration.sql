-- User migration. Imported password hashes need no column: they are stored self-describing in
-- users.password_hash (bcrypt/argon2 as imported, the others as $gh-<type>$<config>$<hash>; see credentials/hashers).

-- How a migrated phone number is used: 'auth' signs in by SMS code, 'mfa' is asked to enrol SMS MFA at next sign-in.
ALTER TABLE users ADD COLUMN phone_number_type text CHECK (phone_number_type IN ('auth', 'mfa'));
-- An imported authenticator-app (TOTP) secret, sealed with the key-encryption key (AES-256-GCM); never returned.
ALTER TABLE users ADD COLUMN authenticator_mfa_secret_enc text;
-- Migrated without a password hash Gatehouse can verify: sign-in answers the reset flow (resetPasswordToken).
ALTER TABLE users ADD COLUMN must_reset_password boolean NOT NULL DEFAULT false;

-- One-time tokens of the reset flow (sign-in of a user whose password cannot be verified), stored hashed.
CREATE TABLE password_reset_tokens (
  token_hash  text PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  reason      text NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_reset_tokens_user ON password_reset_tokens (user_id);

-- Applications of the environment. Exactly one is the default; auto-assign ones also receive every migrated user.
CREATE TABLE applications (
  id           uuid PRIMARY KEY,
  name         text NOT NULL,
  app_url      text NOT NULL DEFAULT '',
  login_url    text NOT NULL DEFAULT '',
  is_default   boolean NOT NULL DEFAULT false,
  auto_assign  boolean NOT NULL DEFAULT false,
  is_active    boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX applications_one_default ON applications (is_default) WHERE is_default;
INSERT INTO applications (id, name, is_default) VALUES (gen_random_uuid(), 'Default application', true);

-- A user's access to an application, per account membership.
CREATE TABLE user_applications (
  app_id      uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  tenant_id   text COLLATE "C" NOT NULL,
  user_id     uuid NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, tenant_id, user_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX user_applications_user ON user_applications (user_id);
