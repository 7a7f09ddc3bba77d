-- Account list pages sorted by name (GET /tenants/resources/tenants/v2?_sortBy=name). The page's keys are read from
-- the sort index before the rows are fetched; carrying `name` in the index (INCLUDE) lets PostgreSQL read those keys
-- from the index alone (an index-only scan, once the table is vacuumed) instead of visiting one table row per entry it
-- skips on a deep page. Same key and predicate as before, so it replaces the index of 0002.
DROP INDEX tenants_by_name;
CREATE INDEX tenants_by_name ON tenants ((lower(name) COLLATE "C"), tenant_id) INCLUDE (name) WHERE deleted_at IS NULL;
