-- Multi-factor authentication. Users are environment-wide, so devices, codes and tokens are keyed by user;
-- the MFA policy is per scope like the security policies (environment row: tenant_id NULL; one per account).

-- Environment MFA configuration (one row): which factors are offered, the issuer shown in authenticator apps, and
-- the lifetime of SMS and email codes.
CREATE TABLE mfa_config (
  id                    boolean PRIMARY KEY DEFAULT true CHECK (id),
  authenticator_active  boolean NOT NULL DEFAULT true,
  service_name          text NOT NULL DEFAULT 'Gatehouse',
  sms_active            boolean NOT NULL DEFAULT true,
  sms_ttl_seconds       integer NOT NULL DEFAULT 300 CHECK (sms_ttl_seconds BETWEEN 30 AND 3600),
  email_active          boolean NOT NULL DEFAULT false,
  email_ttl_seconds     integer NOT NULL DEFAULT 300 CHECK (email_ttl_seconds BETWEEN 30 AND 3600),
  email_sender          text NOT NULL DEFAULT '',
  updated_at            timestamptz NOT NULL DEFAULT now()
);
INSERT INTO mfa_config (id) VALUES (true);

-- MFA policy per scope: enforcement, remember-device and how long a remembered device skips MFA (seconds).
CREATE TABLE mfa_policies (
  tenant_id                  text COLLATE "C" REFERENCES tenants (tenant_id),
  id                         uuid NOT NULL UNIQUE,
  enforce                    text NOT NULL CHECK (enforce IN ('Off', 'DontForce', 'Force', 'ForceExceptSAML')),
  allow_remember             boolean NOT NULL DEFAULT false,
  device_expiration_seconds  integer NOT NULL DEFAULT 1209600 CHECK (device_expiration_seconds BETWEEN 60 AND 31536000),
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mfa_policies_scope ON mfa_policies ((coalesce(tenant_id, '')));
-- The environment default: MFA optional (asked of enrolled users), no remember-device, 14 days when allowed.
INSERT INTO mfa_policies (tenant_id, id, enforce, allow_remember, device_expiration_seconds)
VALUES (NULL, gen_random_uuid(), 'DontForce', false, 1209600);

-- Enrolled factors. authenticator: base32 secret sealed with the KEK, last accepted TOTP step (a code is accepted
-- once). sms: the phone number. verified_at NULL = enrolment waiting for its first code.
CREATE TABLE mfa_devices (
  id            uuid PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('authenticator', 'sms')),
  secret_enc    text,
  phone_number  text,
  last_step     bigint,
  source        text NOT NULL DEFAULT 'enrolled' CHECK (source IN ('enrolled', 'migrated')),
  verified_at   timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mfa_devices_user ON mfa_devices (user_id, kind);

-- One-time recovery codes, SHA-256 of the code; used_at set when spent.
CREATE TABLE mfa_recovery_codes (
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, code_hash)
);

-- The pending second step of a sign-in: single-use, short-lived, stored as SHA-256.
CREATE TABLE mfa_tokens (
  token_hash  text PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tenant_id   text COLLATE "C" NOT NULL,
  amr         text[] NOT NULL,
  failures    integer NOT NULL DEFAULT 0,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mfa_tokens_user ON mfa_tokens (user_id);

-- Codes sent by SMS or email (sign-in, enrolment, removal). Looked up by the SHA-256 of the otcToken; the code is
-- stored as SHA-256(otcToken ":" code), so the table alone does not reveal or test codes.
CREATE TABLE mfa_codes (
  token_hash      text PRIMARY KEY,
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose         text NOT NULL,
  device_id       uuid,
  phone_number    text,
  mfa_token_hash  text,
  code_hash       text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  expires_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mfa_codes_user ON mfa_codes (user_id);

-- Remembered devices: SHA-256 of the cookie value; skip MFA for this user until expires_at.
CREATE TABLE mfa_remembered_devices (
  token_hash  text PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mfa_remembered_devices_user ON mfa_remembered_devices (user_id);
