-- The environment (vendor) itself: one row. Its id is the vendorId / token audience.
CREATE TABLE environment (
  id          uuid PRIMARY KEY,
  singleton   boolean NOT NULL DEFAULT true UNIQUE CHECK (singleton),
  settings    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Environment API credentials exchanged at POST /auth/vendor. Secrets are stored as SHA-256 (they are 256-bit random).
CREATE TABLE env_credentials (
  id            uuid PRIMARY KEY,
  client_id     text NOT NULL UNIQUE,
  secret_hash   text NOT NULL,
  description   text NOT NULL DEFAULT '',
  scopes        text[] NOT NULL DEFAULT '{}',
  bootstrap     boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);

-- JWT signing keys. Private keys are AES-256-GCM encrypted with the key-encryption key (never stored in clear).
CREATE TABLE signing_keys (
  kid              text PRIMARY KEY,
  alg              text NOT NULL,
  public_jwk       jsonb NOT NULL,
  public_pem       text NOT NULL,
  private_key_enc  text NOT NULL,
  status           text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  retired_at       timestamptz,
  verify_until     timestamptz
);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (status) WHERE status = 'active';

-- Durable background jobs. A worker claims a row with FOR UPDATE SKIP LOCKED and holds a lease; a crashed worker's
-- lease expires and another claims the job, which resumes from the progress it committed.
CREATE TABLE jobs (
  id            uuid PRIMARY KEY,
  kind          text NOT NULL,
  tenant_id     text,
  payload       jsonb NOT NULL DEFAULT '{}'::jsonb,
  state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'completed', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  max_attempts  integer NOT NULL DEFAULT 5,
  run_after     timestamptz NOT NULL DEFAULT now(),
  locked_by     text,
  locked_until  timestamptz,
  last_error    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  started_at    timestamptz,
  completed_at  timestamptz
);
CREATE INDEX jobs_claim ON jobs (run_after) WHERE state IN ('pending', 'running');
