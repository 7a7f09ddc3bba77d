-- Messaging: email over SMTP, SMS over a provider's REST API, templates, delivery records and the
-- development outbox. Configuration and templates are environment-wide (one environment per deployment).

-- The environment's email (SMTP) configuration: at most one row (id = 'default'). The password is sealed with the KEK.
CREATE TABLE mail_configurations (
  id            text PRIMARY KEY DEFAULT 'default' CHECK (id = 'default'),
  provider      text NOT NULL DEFAULT 'smtp',
  host          text NOT NULL,
  port          integer NOT NULL,
  secure        boolean NOT NULL DEFAULT false,
  username      text,
  password_enc  text,
  sender_email  text NOT NULL,
  from_name     text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The environment's SMS provider configuration: at most one row. The token is sealed with the KEK.
CREATE TABLE sms_configurations (
  id            text PRIMARY KEY DEFAULT 'default' CHECK (id = 'default'),
  provider      text NOT NULL DEFAULT 'twilio',
  account_id    text NOT NULL,
  token_enc     text NOT NULL,
  service_id    text,
  sender_name   text,
  channel       text NOT NULL DEFAULT 'sms',
  base_url      text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Email templates of the environment, one per message type; a type without a row uses the built-in default.
CREATE TABLE email_templates (
  id                            uuid PRIMARY KEY,
  type                          text NOT NULL UNIQUE,
  subject                       text NOT NULL,
  html_template                 text NOT NULL,
  sender_email                  text,
  from_name                     text,
  redirect_url                  text,
  success_redirect_url          text,
  redirect_url_pattern          text,
  success_redirect_url_pattern  text,
  active                        boolean NOT NULL DEFAULT true,
  created_at                    timestamptz NOT NULL DEFAULT now(),
  updated_at                    timestamptz NOT NULL DEFAULT now()
);

-- SMS templates of the environment, one per message type.
CREATE TABLE sms_templates (
  type        text PRIMARY KEY,
  body        text NOT NULL,
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per message handed to messaging: its state, attempts and last error. No content (messages carry codes).
CREATE TABLE message_deliveries (
  id                   uuid PRIMARY KEY,
  tenant_id            text COLLATE "C",
  channel              text NOT NULL CHECK (channel IN ('email', 'sms')),
  type                 text NOT NULL,
  recipient            text NOT NULL,
  status               text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'retrying', 'sent', 'dev-outbox', 'failed', 'skipped')),
  provider             text,
  attempts             integer NOT NULL DEFAULT 0,
  last_error           text,
  provider_message_id  text,
  job_id               uuid,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  sent_at              timestamptz
);
CREATE INDEX message_deliveries_created ON message_deliveries (created_at, id);
CREATE INDEX message_deliveries_status ON message_deliveries (status, created_at) WHERE status IN ('retrying', 'failed');

-- The development outbox: rendered messages kept for the operator when no provider is configured (never in
-- production unless MESSAGING_DEV_OUTBOX=true). Holds message content, codes included: development only.
CREATE TABLE dev_outbox (
  id           uuid PRIMARY KEY,
  delivery_id  uuid NOT NULL REFERENCES message_deliveries (id) ON DELETE CASCADE,
  tenant_id    text COLLATE "C",
  channel      text NOT NULL,
  type         text NOT NULL,
  recipient    text NOT NULL,
  sender       text,
  subject      text,
  text_body    text NOT NULL,
  html_body    text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dev_outbox_created ON dev_outbox (created_at, id);
CREATE INDEX dev_outbox_recipient ON dev_outbox (recipient, created_at);
