-- Events (issue 10): the outbox. A change and its event are written in the same transaction; delivery reads by seq.
CREATE TABLE events (
  seq         bigserial PRIMARY KEY,
  id          uuid NOT NULL UNIQUE,
  event_key   text NOT NULL,
  tenant_id   text,
  entity_type text,
  entity_id   text,
  data        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_tenant_seq ON events (tenant_id, seq);
