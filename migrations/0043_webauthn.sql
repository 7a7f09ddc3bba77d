-- WebAuthn (passkeys): public-key credentials of users, usable as a second factor and, when discoverable, as the
-- first factor of a sign-in. credential_id is the authenticator's id (base64url); counter the last signature
-- counter seen (a lower or equal non-zero one is refused as a possible clone).
CREATE TABLE webauthn_credentials (
  id             uuid PRIMARY KEY,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id  text NOT NULL UNIQUE,
  public_key     bytea NOT NULL,
  counter        bigint NOT NULL DEFAULT 0 CHECK (counter >= 0),
  transports     text[] NOT NULL DEFAULT '{}',
  device_type    text NOT NULL CHECK (device_type IN ('Platform', 'CrossPlatform')),
  backed_up      boolean NOT NULL DEFAULT false,
  name           text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz
);
CREATE INDEX webauthn_credentials_user ON webauthn_credentials (user_id, created_at);

-- Outstanding ceremonies: the challenge (base64url, random) sent in the options, what it is for, whom it binds and
-- until when. A verify deletes its row first, so a challenge is spent once whether the verify succeeds or not.
CREATE TABLE webauthn_challenges (
  challenge       text PRIMARY KEY,
  purpose         text NOT NULL CHECK (purpose IN ('register', 'mfa-enroll', 'mfa-verify', 'disable', 'login')),
  user_id         uuid REFERENCES users (id) ON DELETE CASCADE,
  mfa_token_hash  text,
  device_id       uuid,
  expires_at      timestamptz NOT NULL
);
CREATE INDEX webauthn_challenges_expiry ON webauthn_challenges (expires_at);

-- The MFA strategies WebAuthnPlatform and WebAuthnCrossPlatform (off until turned on).
ALTER TABLE mfa_config ADD COLUMN webauthn_platform_active boolean NOT NULL DEFAULT false;
ALTER TABLE mfa_config ADD COLUMN webauthn_cross_platform_active boolean NOT NULL DEFAULT false;
