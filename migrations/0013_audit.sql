-- Audit log: append-only, hash-chained. hash = sha256(canonical content + prev_hash); see src/modules/audit/chain.ts.
CREATE TABLE audit_log (
  seq         bigserial PRIMARY KEY,
  id          uuid NOT NULL UNIQUE,
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
  data        jsonb NOT NULL DEFAULT '{}'::jsonb,
  hash        text NOT NULL,
  prev_hash   text NOT NULL
);
CREATE INDEX audit_log_tenant_time ON audit_log (tenant_id, created_at);
CREATE INDEX audit_log_time ON audit_log (created_at);

-- One row: the chain head (appends lock it, so they are serialised) and the anchor left by retention
-- (the hash of the last removed entry: the first remaining entry's prev_hash must equal it).
CREATE TABLE audit_chain (
  id          integer PRIMARY KEY CHECK (id = 1),
  head_hash   text NOT NULL,
  anchor_hash text NOT NULL,
  anchor_seq  bigint NOT NULL DEFAULT 0,
  removed     bigint NOT NULL DEFAULT 0
);
INSERT INTO audit_chain (id, head_hash, anchor_hash) VALUES (1, repeat('0', 64), repeat('0', 64));
