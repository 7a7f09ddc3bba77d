-- Entitlements: features, plans (feature bundles with targeting rules), grants of a plan to an account or one user
-- of it, feature flags, route rules and the one settings row holding the routes mode and the snapshot offset.
-- Every write bumps entitlement_settings.snapshot_offset in its own transaction, so the agent sees each change.
CREATE TABLE entitlement_settings (
  id               integer PRIMARY KEY CHECK (id = 1),
  routes_mode      text NOT NULL DEFAULT 'guard' CHECK (routes_mode IN ('guard', 'monitor')),
  snapshot_offset  bigint NOT NULL DEFAULT 0,
  settings_id      uuid NOT NULL DEFAULT '3f1c2b8e-6a49-4f0e-9d7e-2b6c1e0a5d11'
);
INSERT INTO entitlement_settings (id) VALUES (1);

CREATE TABLE entitlement_features (
  id           uuid PRIMARY KEY,
  key          text COLLATE "C" NOT NULL UNIQUE,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  permissions  text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE entitlement_plans (
  id                       uuid PRIMARY KEY,
  name                     text COLLATE "C" NOT NULL UNIQUE,
  description              text NOT NULL DEFAULT '',
  metadata                 jsonb NOT NULL DEFAULT '{}'::jsonb,
  default_treatment        text NOT NULL DEFAULT 'false' CHECK (default_treatment IN ('true', 'false')),
  rules                    jsonb NOT NULL DEFAULT '[]'::jsonb,
  default_time_limitation  integer CHECK (default_time_limitation IS NULL OR default_time_limitation > 0),
  assign_on_signup         boolean NOT NULL DEFAULT false,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE entitlement_plan_features (
  plan_id     uuid NOT NULL REFERENCES entitlement_plans (id) ON DELETE CASCADE,
  feature_id  uuid NOT NULL REFERENCES entitlement_features (id) ON DELETE CASCADE,
  PRIMARY KEY (plan_id, feature_id)
);
CREATE INDEX entitlement_plan_features_by_feature ON entitlement_plan_features (feature_id);

-- Grants are owned by an account: keyed tenant_id first; user_id NULL is an account-level grant.
CREATE TABLE entitlement_grants (
  tenant_id        text COLLATE "C" NOT NULL REFERENCES tenants (tenant_id),
  id               uuid NOT NULL UNIQUE,
  plan_id          uuid NOT NULL REFERENCES entitlement_plans (id) ON DELETE CASCADE,
  user_id          text COLLATE "C",
  expiration_date  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX entitlement_grants_subject ON entitlement_grants (tenant_id, plan_id, (coalesce(user_id, '')));
CREATE INDEX entitlement_grants_by_plan ON entitlement_grants (plan_id);

CREATE TABLE entitlement_feature_flags (
  id                 uuid PRIMARY KEY,
  feature_id         uuid NOT NULL UNIQUE REFERENCES entitlement_features (id) ON DELETE CASCADE,
  name               text NOT NULL,
  description        text NOT NULL DEFAULT '',
  metadata           text NOT NULL DEFAULT '{}',
  "on"               boolean NOT NULL DEFAULT false,
  default_treatment  text NOT NULL CHECK (default_treatment IN ('true', 'false')),
  off_treatment      text NOT NULL CHECK (off_treatment IN ('true', 'false')),
  rules              jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE entitlement_routes (
  id           uuid PRIMARY KEY,
  method       text NOT NULL CHECK (method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', '*')),
  path         text COLLATE "C" NOT NULL,
  priority     integer NOT NULL,
  description  text NOT NULL DEFAULT '',
  policy_type  text NOT NULL CHECK (policy_type IN ('allow', 'deny', 'ruleBased')),
  rules        jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (method, path)
);
CREATE INDEX entitlement_routes_order ON entitlement_routes (priority, created_at, id);
