-- A remembered-device lifetime of 0 means nothing when remember-device is off: accept it there only.
ALTER TABLE mfa_policies DROP CONSTRAINT mfa_policies_device_expiration_seconds_check;
ALTER TABLE mfa_policies ADD CONSTRAINT mfa_policies_device_expiration_seconds_check CHECK (
  device_expiration_seconds BETWEEN 60 AND 31536000 OR (device_expiration_seconds = 0 AND NOT allow_remember)
);

-- An account's alias: a second, caller-chosen name, unique among live accounts whatever its case (a removed
-- account's alias is free again).
ALTER TABLE tenants ADD COLUMN alias text;
CREATE UNIQUE INDEX tenants_alias ON tenants (lower(alias)) WHERE alias IS NOT NULL AND deleted_at IS NULL;
