-- Sign-in flows working together.

-- Identities at social login providers: the provider's stable subject id names the user from the second sign-in on
-- (an email change at the provider does not make a second user). Users are environment-wide, so this table is too.
-- One row per provider + subject; a user has at most one identity per provider.
CREATE TABLE user_identities (
  provider       text NOT NULL,
  subject        text NOT NULL,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email          text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_login_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, subject)
);
CREATE UNIQUE INDEX user_identities_user ON user_identities (user_id, provider);

-- Housekeeping (src/modules/housekeeping): bounded purges of expired rows find them by expiry. These indexes serve
-- environment-wide clean-up, not account queries, so they do not lead with tenant_id.
CREATE INDEX one_time_codes_expiry ON one_time_codes (expires_at);
CREATE INDEX one_time_codes_used ON one_time_codes (used_at) WHERE used_at IS NOT NULL;
CREATE INDEX mfa_tokens_expiry ON mfa_tokens (expires_at);
CREATE INDEX mfa_codes_expiry ON mfa_codes (expires_at);
CREATE INDEX mfa_remembered_devices_expiry ON mfa_remembered_devices (expires_at);
CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX jobs_finished ON jobs (kind, completed_at) WHERE state IN ('completed', 'failed');
CREATE INDEX password_reset_tokens_expiry ON password_reset_tokens (expires_at);
CREATE INDEX recovery_codes_expiry ON recovery_codes (expires_at);
CREATE INDEX email_verification_tokens_expiry ON email_verification_tokens (expires_at);
CREATE INDEX phone_codes_expiry ON phone_codes (expires_at);
