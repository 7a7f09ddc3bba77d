-- The OpenID Connect provider's state (oidc-provider models: sessions, interactions, grants, authorization codes,
-- access and refresh tokens, and the link of a grant to its Gatehouse session), one row per model instance.
-- `consumed_at` marks a used code or rotated refresh token; rows past `expires_at` are purged by housekeeping.
CREATE TABLE oidc_payloads (
  id           text COLLATE "C" NOT NULL,
  kind         text COLLATE "C" NOT NULL,
  payload      jsonb NOT NULL,
  grant_id     text COLLATE "C",
  user_code    text COLLATE "C",
  uid          text COLLATE "C",
  expires_at   timestamptz,
  consumed_at  timestamptz,
  PRIMARY KEY (kind, id)
);
CREATE INDEX oidc_payloads_grant ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_payloads_uid ON oidc_payloads (uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_payloads_user_code ON oidc_payloads (user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_payloads_expires ON oidc_payloads (expires_at) WHERE expires_at IS NOT NULL;

-- Applications as OpenID clients: the redirect URIs registered for each (exact match), and whether it is the
-- environment's own application (first-party: no consent page) or a third party's (the user consents).
ALTER TABLE applications ADD COLUMN redirect_uris text[] NOT NULL DEFAULT '{}';
ALTER TABLE applications ADD COLUMN is_first_party boolean NOT NULL DEFAULT true;
