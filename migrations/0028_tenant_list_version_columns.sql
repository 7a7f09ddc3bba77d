-- Account list: the data version of 0027 moves only when a statement changed what a list is made of.
--
-- 0027 counted every statement that wrote `tenants`, so an update of an account's metadata, website or settings threw
-- away every cached broad-filter list (the next such request read all live accounts again: 40–55 ms at 100,000
-- accounts). A list is made of the live accounts (deleted_at), what a filter matches (`search`, derived from name and
-- tenant_id) and the sort keys (created_at, lower(name), tenant_id); the page's rows themselves are always read
-- fresh. An UPDATE statement now moves the version (and the live count) only when some row changed one of those
-- columns, or when its rows cannot be paired by `id` (an id rewritten by SQL). Inserts, deletes and TRUNCATE move it
-- as before.
CREATE OR REPLACE FUNCTION tenant_live_count_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
              WHERE n.id IS NULL OR o.id IS NULL
                 OR (n.tenant_id, n.name, n.created_at, n.deleted_at) IS DISTINCT FROM (o.tenant_id, o.name, o.created_at, o.deleted_at)) THEN
    PERFORM tenant_live_count_apply((SELECT count(*) FROM new_rows WHERE deleted_at IS NULL) - (SELECT count(*) FROM old_rows WHERE deleted_at IS NULL));
  END IF;
  RETURN NULL;
END $$;
