-- Audit staging (durability): the audit hook writes each entry here with one plain INSERT and awaits it
-- before the response goes out; the chainer (src/modules/audit/chainer.ts) moves staged rows into audit_log in `seq`
-- order under the chain-head lock, computing prev_hash/hash, and deletes them in the same transaction. A crash leaves
-- rows here that the next chainer pass (at start) picks up. Not tenant-led: it is a global FIFO queue consumed in seq
-- order (like audit_log, whose chain is global); rows live here for milliseconds.
CREATE TABLE audit_staging (
  seq         bigserial PRIMARY KEY,
  id          uuid NOT NULL,
  created_at  timestamptz NOT NULL,
  tenant_id   text,
  actor_type  text NOT NULL,
  actor_id    text,
  action      text NOT NULL,
  target_type text,
  target_id   text,
  outcome     text NOT NULL,
  ip          text,
  user_agent  text,
  severity    text NOT NULL,
  data        jsonb NOT NULL DEFAULT '{}'::jsonb
);
