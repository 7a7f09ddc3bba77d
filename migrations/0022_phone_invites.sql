-- Phone-number routes, account invite tokens and email providers v2.

-- Phone numbers get a stable id (the phone-number routes name it) and an update time.
ALTER TABLE user_phone_numbers ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE user_phone_numbers ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE UNIQUE INDEX user_phone_numbers_id ON user_phone_numbers (id);

-- One-time codes texted to prove a phone number (purpose 'verify': add or mark verified) or to remove one
-- ('delete'). The row id is the otcToken; the code is stored as HMAC-SHA256 under a KEK-derived key bound to the row
-- id. Single use, short-lived, burned after too many wrong tries; a new code of the same purpose replaces the old one.
CREATE TABLE phone_codes (
  id            uuid PRIMARY KEY,
  purpose       text NOT NULL CHECK (purpose IN ('verify', 'delete')),
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  phone_number  text NOT NULL,
  code_hash     text NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX phone_codes_user ON phone_codes (user_id, purpose, created_at);

-- Account invite tokens (InviteTokenDto): a shareable link that lets whoever signs up or signs in with it join the
-- account, with the token's roles. Looked up by SHA-256; the token itself is sealed with the KEK so that the account's
-- admins can read it again. `user_id` is the member who owns the invite (one per member and account); NULL for ones
-- the vendor created for the account.
CREATE TABLE tenant_invite_tokens (
  tenant_id          text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id                 uuid NOT NULL,
  user_id            uuid REFERENCES users (id) ON DELETE CASCADE,
  token_hash         text NOT NULL,
  token_enc          text NOT NULL,
  role_ids           text[] NOT NULL DEFAULT '{}',
  should_send_email  boolean NOT NULL DEFAULT false,
  expires_at         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX tenant_invite_tokens_hash ON tenant_invite_tokens (token_hash);
CREATE UNIQUE INDEX tenant_invite_tokens_owner ON tenant_invite_tokens (tenant_id, user_id) WHERE user_id IS NOT NULL;

-- Email providers v2 (SendGrid, Mailgun): no SMTP host/port; an API key (password_enc), a domain and region
-- (Mailgun) and an overridable API base URL.
ALTER TABLE mail_configurations ALTER COLUMN host DROP NOT NULL;
ALTER TABLE mail_configurations ALTER COLUMN port DROP NOT NULL;
ALTER TABLE mail_configurations ADD COLUMN domain text;
ALTER TABLE mail_configurations ADD COLUMN region text;
ALTER TABLE mail_configurations ADD COLUMN base_url text;
