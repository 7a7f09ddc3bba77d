-- User management additions: self-service unlock tokens, bulk task records, and a trigram index for the fuzzy user
-- search (GET /identity/resources/users/v1/query/phrase).

-- One-time unlock tokens of locked users (POST /identity/resources/users/v3/me/unlock), SHA-256 at rest, 1 hour.
CREATE TABLE user_unlock_tokens (
  token_hash  text PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_unlock_tokens_user ON user_unlock_tokens (user_id);

-- Bulk operations on users (invite to an account, roles across accounts): what was asked, how it went, per-item errors.
CREATE TABLE user_bulk_tasks (
  id            uuid PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('invite', 'roles')),
  tenant_id     text COLLATE "C",
  user_id       uuid,
  status        text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  total         integer NOT NULL,
  processed     integer NOT NULL DEFAULT 0,
  succeeded     integer NOT NULL DEFAULT 0,
  failed        integer NOT NULL DEFAULT 0,
  details       jsonb NOT NULL DEFAULT '{}'::jsonb,
  errors        jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz
);
CREATE INDEX user_bulk_tasks_created ON user_bulk_tasks (created_at);

-- The fuzzy search's text of a user: name, email and username, lower-cased (the expression of users/search.store.ts),
-- with a trigram index so a phrase of three characters or more is matched (substring and word similarity) from the
-- index. An expression index, not a column: user rows keep their shape. The operator class lives in the schema of
-- the pg_trgm extension (created by 0025).
DO $$
DECLARE ext_schema text;
BEGIN
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format($f$CREATE INDEX users_search_trgm ON users USING gin ((lower(name) || ' ' || email || ' ' || coalesce(lower(username), '')) %I.gin_trgm_ops)$f$, ext_schema);
END $$;
