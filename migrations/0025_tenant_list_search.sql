-- Account list (GET /tenants/resources/tenants/v2): what its list and search need.
--
-- 1. The number of live accounts, kept by statement-level triggers in the transaction of every change, so an
--    unfiltered page reads its total from a few rows instead of counting 100,000 index entries. Eight slots, picked by
--    backend, so concurrent account writes do not queue on one row; the total is their sum.
CREATE TABLE tenant_live_count (
  slot int PRIMARY KEY CHECK (slot BETWEEN 0 AND 7),
  n    bigint NOT NULL DEFAULT 0
);
INSERT INTO tenant_live_count (slot, n) SELECT s, 0 FROM generate_series(0, 7) s;
UPDATE tenant_live_count SET n = (SELECT count(*) FROM tenants WHERE deleted_at IS NULL) WHERE slot = 0;

CREATE FUNCTION tenant_live_count_apply(delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF delta <> 0 THEN
    UPDATE tenant_live_count SET n = n + delta WHERE slot = pg_backend_pid() % 8;
  END IF;
END $$;

CREATE FUNCTION tenant_live_count_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tenant_live_count_apply((SELECT count(*) FROM new_rows WHERE deleted_at IS NULL));
  RETURN NULL;
END $$;
CREATE FUNCTION tenant_live_count_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tenant_live_count_apply(-(SELECT count(*) FROM old_rows WHERE deleted_at IS NULL));
  RETURN NULL;
END $$;
CREATE FUNCTION tenant_live_count_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tenant_live_count_apply((SELECT count(*) FROM new_rows WHERE deleted_at IS NULL) - (SELECT count(*) FROM old_rows WHERE deleted_at IS NULL));
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_live_count_ins AFTER INSERT ON tenants REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_live_count_ins();
CREATE TRIGGER tenants_live_count_del AFTER DELETE ON tenants REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_live_count_del();
CREATE TRIGGER tenants_live_count_upd AFTER UPDATE ON tenants REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_live_count_upd();

-- 2. The text a filter searches (`_filter`: a substring of the name or of the account id, case-insensitive), lowered
--    once when written rather than for every row of every filtered request. chr(1) separates the two parts; a filter
--    containing it matches nothing (the service answers an empty page), so no match can span both.
ALTER TABLE tenants ADD COLUMN search text GENERATED ALWAYS AS (lower(name) || chr(1) || lower(tenant_id)) STORED;

-- 3. A trigram index over it, so a filter of three characters or more finds its matches (and their count) from the
--    index. pg_trgm ships with PostgreSQL's contrib and with PGlite; the operator class is looked up in whatever
--    schema the extension lives in (it is one per database, and tests use one schema per file).
DO $$
DECLARE ext_schema text;
BEGIN
  -- In `public` when there is one, so it outlives any other schema on the search path (tests drop theirs).
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
      CREATE EXTENSION pg_trgm SCHEMA public;
    ELSE
      CREATE EXTENSION pg_trgm;
    END IF;
  END IF;
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE INDEX tenants_search_trgm ON tenants USING gin (search %I.gin_trgm_ops) WHERE deleted_at IS NULL', ext_schema);
END $$;
