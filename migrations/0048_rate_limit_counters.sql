-- Rate-limit counters every instance shares: one row per key and fixed window (src/modules/limits).
-- UNLOGGED: written on every sign-in and worth nothing after a crash (a restart begins fresh windows), so they skip
-- the write-ahead log; they are not copied to replicas either, and a failover starts fresh windows too.
CREATE UNLOGGED TABLE rate_limit_counters (
  key        text PRIMARY KEY,
  window_end timestamptz NOT NULL,
  count      integer NOT NULL
);
CREATE INDEX rate_limit_counters_window_end ON rate_limit_counters (window_end);
