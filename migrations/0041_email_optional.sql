-- A user signed up with a username may have no email (POST /identity/resources/users/v1/signUp/username).
-- users_email stays unique for the addresses that exist (a unique index admits many NULLs); a user needs an email
-- or a username to be found at all.
ALTER TABLE users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE users ADD CONSTRAINT users_email_or_username CHECK (email IS NOT NULL OR username IS NOT NULL);

-- The fuzzy search's text (users/search.store.ts) must not turn NULL for a user without an email: the same
-- trigram index as 0033 over coalesce(email, '').
DROP INDEX users_search_trgm;
DO $$
DECLARE ext_schema text;
BEGIN
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format($f$CREATE INDEX users_search_trgm ON users USING gin ((lower(name) || ' ' || coalesce(email, '') || ' ' || coalesce(lower(username), '')) %I.gin_trgm_ops)$f$, ext_schema);
END $$;
