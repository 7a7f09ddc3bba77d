-- Accounts (tenants). Removal is soft (deleted_at) so that creating the same id again reactivates it.
-- Ids and names sort with the "C" collation so PGlite and a PostgreSQL server order identically.
CREATE TABLE tenants (
  tenant_id                text COLLATE "C" PRIMARY KEY,
  id                       uuid NOT NULL UNIQUE,
  name                     text NOT NULL,
  status                   text,
  website                  text,
  application_url          text,
  login_url                text,
  logo                     text,
  logo_url                 text,
  address                  text,
  timezone                 text,
  date_format              text,
  time_format              text,
  currency                 text,
  creator_name             text,
  creator_email            text,
  metadata                 jsonb NOT NULL DEFAULT '{}'::jsonb,
  is_reseller              boolean NOT NULL DEFAULT false,
  sub_account_access_type  text NOT NULL DEFAULT 'defaultOff' CHECK (sub_account_access_type IN ('defaultOff', 'defaultOn', 'alwaysOn')),
  parent_tenant_id         text COLLATE "C" REFERENCES tenants (tenant_id),
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  deleted_at               timestamptz,
  CHECK (parent_tenant_id IS NULL OR parent_tenant_id <> tenant_id)
);
-- Children of a node (hierarchy walks go down this index).
CREATE INDEX tenants_parent ON tenants (parent_tenant_id, tenant_id) WHERE deleted_at IS NULL;
-- List pages, one index per sort key, tenant_id as the tie-breaker.
CREATE INDEX tenants_by_created ON tenants (created_at, tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX tenants_by_name ON tenants ((lower(name) COLLATE "C"), tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX tenants_live ON tenants (tenant_id) WHERE deleted_at IS NULL;

-- Migration jobs (accounts now, users later): the request items and the progress, committed step by step.
CREATE TABLE migrations (
  id            uuid PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('tenants', 'users')),
  state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'completed', 'failed')),
  items         jsonb NOT NULL,
  total         integer NOT NULL,
  cursor        integer NOT NULL DEFAULT 0,
  succeeded     integer NOT NULL DEFAULT 0,
  failed        integer NOT NULL DEFAULT 0,
  errors        jsonb NOT NULL DEFAULT '[]'::jsonb,
  failure       text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  started_at    timestamptz,
  completed_at  timestamptz
);
