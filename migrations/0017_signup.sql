-- Sign-up, activation, invitations and passwordless sign-in.

-- One-time secrets of the sign-in flows: a link token (256 random bits, stored as SHA-256) and/or a short code
-- (stored as HMAC-SHA256 under a key derived from the KEK, so a leaked table cannot be brute-forced offline).
-- Single use (used_at), short-lived (expires_at), wrong codes counted (attempts). Invitation rows name their account.
CREATE TABLE one_time_codes (
  id          uuid PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('activation', 'invitation', 'magiclink', 'code', 'smscode')),
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tenant_id   text COLLATE "C",
  token_hash  text,
  code_hash   text,
  attempts    integer NOT NULL DEFAULT 0,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX one_time_codes_token ON one_time_codes (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX one_time_codes_user ON one_time_codes (user_id, purpose, created_at);

-- Users who signed up and have not activated yet: they cannot sign in until they do.
CREATE TABLE pending_activations (
  user_id     uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Invitations of users to accounts: the membership exists from the invitation on; accepted_at is set on acceptance.
-- Removing the membership removes the invitation.
CREATE TABLE user_invitations (
  tenant_id    text COLLATE "C" NOT NULL,
  user_id      uuid NOT NULL,
  invited_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  accepted_at  timestamptz,
  PRIMARY KEY (tenant_id, user_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES user_tenants (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX user_invitations_user ON user_invitations (user_id);

-- Environment-wide settings of these flows, one JSON document per key ('activation', 'invitation', 'passwordless').
CREATE TABLE signin_flow_settings (
  key         text PRIMARY KEY,
  value       jsonb NOT NULL DEFAULT '{}'::jsonb,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
