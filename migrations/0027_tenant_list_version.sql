-- Account list (GET /tenants/resources/tenants/v2): a data version for the list cache of short filters.
--
-- A filter the trigram index of 0025 cannot serve (fewer than three letters or digits in a row, e.g. `an`) reads every
-- live account. The server keeps the ordered ids of such a filter's matches in memory and serves every page and the
-- total from them while the accounts are unchanged. "Unchanged" must hold across every server process on the
-- database, so it is read from the database: `changes` counts the statements that wrote `tenants`, kept by the same
-- statement-level triggers (and the same eight slots) as the live count, in the transaction of the change. The
-- version is the sum over the slots; it only grows, and a later snapshot sees every change an earlier one saw, so an
-- equal sum means the same accounts.
ALTER TABLE tenant_live_count ADD COLUMN changes bigint NOT NULL DEFAULT 0;

-- Every statement that wrote at least one row counts, whatever it changed (an update of one row's metadata too: the
-- triggers do not judge which columns a list depends on). A statement that wrote nothing leaves the version alone.
CREATE OR REPLACE FUNCTION tenant_live_count_apply(delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenant_live_count SET n = n + delta, changes = changes + 1 WHERE slot = pg_backend_pid() % 8;
END $$;

CREATE OR REPLACE FUNCTION tenant_live_count_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows) THEN
    PERFORM tenant_live_count_apply((SELECT count(*) FROM new_rows WHERE deleted_at IS NULL));
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION tenant_live_count_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM old_rows) THEN
    PERFORM tenant_live_count_apply(-(SELECT count(*) FROM old_rows WHERE deleted_at IS NULL));
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION tenant_live_count_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows) THEN
    PERFORM tenant_live_count_apply((SELECT count(*) FROM new_rows WHERE deleted_at IS NULL) - (SELECT count(*) FROM old_rows WHERE deleted_at IS NULL));
  END IF;
  RETURN NULL;
END $$;

-- TRUNCATE fires no row or transition-table trigger: it empties the count and moves the version on its own.
CREATE FUNCTION tenant_live_count_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenant_live_count SET n = 0;
  UPDATE tenant_live_count SET changes = changes + 1 WHERE slot = pg_backend_pid() % 8;
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_live_count_truncate AFTER TRUNCATE ON tenants FOR EACH STATEMENT EXECUTE FUNCTION tenant_live_count_truncate();
