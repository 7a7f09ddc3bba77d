-- Sign-in sessions. A session holds one live refresh token at a time; every rotated token is kept (hashed) so that a
-- replayed one is recognised and revokes the whole session.
CREATE TABLE sessions (
  id            uuid PRIMARY KEY,
  tenant_id     text COLLATE "C" NOT NULL,
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  amr           text[] NOT NULL DEFAULT '{pwd}',
  ip            text,
  user_agent    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz,
  revoke_reason text
);
CREATE INDEX sessions_user ON sessions (user_id, created_at) WHERE revoked_at IS NULL;
CREATE INDEX sessions_tenant ON sessions (tenant_id, user_id);

CREATE TABLE refresh_tokens (
  token_hash  text PRIMARY KEY,
  session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  rotated_at  timestamptz
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

-- Session policy: the environment's (tenant_id NULL) and optional per-account overrides. NULL timeouts are off.
CREATE TABLE session_policies (
  scope                 text COLLATE "C" PRIMARY KEY,  -- '' for the environment, else the tenant id
  idle_timeout_seconds  integer,
  absolute_timeout_seconds integer,
  max_concurrent        integer,
  updated_at            timestamptz NOT NULL DEFAULT now()
);
