-- Security policies: password complexity, password history and lockout. Each table holds at most one policy per scope:
-- the environment-level one (tenant_id NULL) and one per account (tenant_id set), unique on coalesce(tenant_id, '')
-- (account ids are never empty). Reads for an account take its own row, else the environment row.
CREATE TABLE password_policies (
  tenant_id                   text COLLATE "C" REFERENCES tenants (tenant_id),
  id                          uuid NOT NULL UNIQUE,
  min_length                  integer NOT NULL CHECK (min_length BETWEEN 1 AND 128),
  max_length                  integer NOT NULL CHECK (max_length BETWEEN 1 AND 128),
  allow_passphrases           boolean NOT NULL,
  min_phrase_length           integer NOT NULL CHECK (min_phrase_length BETWEEN 1 AND 128),
  min_optional_tests_to_pass  integer NOT NULL CHECK (min_optional_tests_to_pass BETWEEN 0 AND 4),
  require_lowercase           boolean NOT NULL,
  require_uppercase           boolean NOT NULL,
  require_numbers             boolean NOT NULL,
  require_special_chars       boolean NOT NULL,
  block_pwned_passwords       boolean NOT NULL,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK (min_length <= max_length)
);
CREATE UNIQUE INDEX password_policies_scope ON password_policies ((coalesce(tenant_id, '')));

CREATE TABLE password_history_policies (
  tenant_id     text COLLATE "C" REFERENCES tenants (tenant_id),
  id            uuid NOT NULL UNIQUE,
  enabled       boolean NOT NULL,
  history_size  integer NOT NULL CHECK (history_size BETWEEN 1 AND 24),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX password_history_policies_scope ON password_history_policies ((coalesce(tenant_id, '')));

CREATE TABLE lockout_policies (
  tenant_id              text COLLATE "C" REFERENCES tenants (tenant_id),
  id                     uuid NOT NULL UNIQUE,
  enabled                boolean NOT NULL,
  max_attempts           integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
  lock_duration_minutes  integer CHECK (lock_duration_minutes BETWEEN 1 AND 43200),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX lockout_policies_scope ON lockout_policies ((coalesce(tenant_id, '')));
-- The environment default: lock after 5 failed sign-ins in a row, for 15 minutes. A row (not only a constant in code)
-- so that GET answers it with an id and the environment changes it with PATCH.
INSERT INTO lockout_policies (tenant_id, id, enabled, max_attempts, lock_duration_minutes)
VALUES (NULL, gen_random_uuid(), true, 5, 15);

-- Previous password hashes per user (the highest seq is the newest), for the history policy. user_id is text without a
-- foreign key: the users table belongs to the users module, written concurrently with this one; a removed user's rows
-- are dropped by the credentials service's forgetUser.
CREATE TABLE password_history (
  user_id     text NOT NULL,
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  hash        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, seq)
);
