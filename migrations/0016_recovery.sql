-- Password reset and email verification. Link tokens of the reset flow live in password_reset_tokens
-- (0010; SHA-256 of a 256-bit secret). Short codes (reset by SMS, email verification / email change) live here:
-- HMAC-SHA256 under a KEK-derived key, bound to the row id; single use, short-lived, burned after too many wrong tries.
CREATE TABLE recovery_codes (
  id            uuid PRIMARY KEY,
  purpose       text NOT NULL CHECK (purpose IN ('reset-sms', 'verify-email')),
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  target        text,
  code_hash     text NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recovery_codes_user ON recovery_codes (user_id, purpose, created_at);

-- Email verification links: SHA-256 of a 256-bit secret, single use.
CREATE TABLE email_verification_tokens (
  token_hash  text PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email       text NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_verification_tokens_user ON email_verification_tokens (user_id);
