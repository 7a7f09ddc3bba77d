-- Events: the outbox. A change and its event are written in the same transaction; delivery reads by seq.
CREATE TABLE events (
  seq           bigserial PRIMARY KEY,
  id            uuid NOT NULL UNIQUE,
  event_key     text NOT NULL,
  tenant_id     text,
  entity_type   text,
  entity_id     text,
  data          jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Set once the dispatcher has fanned the event out to the matching webhooks (rows for every endpoint written).
  dispatched_at timestamptz
);
CREATE INDEX events_tenant_seq ON events (tenant_id, seq);
CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL;

-- One row: the fan-out lock. Fan-out is serialised so deliveries keep the events' order per entity.
CREATE TABLE event_dispatch (
  id      integer PRIMARY KEY CHECK (id = 1),
  last_at timestamptz
);
INSERT INTO event_dispatch (id) VALUES (1);

-- Webhook endpoints: environment-wide (tenant_id NULL) or one account's (only that account's events).
CREATE TABLE webhooks (
  id            uuid PRIMARY KEY,
  tenant_id     text,
  display_name  text NOT NULL,
  url           text NOT NULL,
  secret_sealed text NOT NULL,
  event_keys    text[] NOT NULL,
  is_active     boolean NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at);

-- One row per (event, endpoint): the delivery log. `body` is exactly what is signed and sent (replays resend it).
CREATE TABLE webhook_deliveries (
  seq             bigserial PRIMARY KEY,
  id              uuid NOT NULL UNIQUE,
  webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  tenant_id       text,
  event_id        uuid NOT NULL,
  event_key       text NOT NULL,
  entity_key      text NOT NULL,
  body            text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'succeeded', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until    timestamptz,
  give_up_at      timestamptz NOT NULL,
  response_status integer,
  response_body   text,
  last_error      text,
  replay_of       uuid,
  created_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, entity_key, seq) WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
