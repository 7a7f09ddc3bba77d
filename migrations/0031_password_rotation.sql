-- Password rotation (expiry) and the user emails policy.
--
-- When a user's password was last set. Existing users start their clock at this upgrade (nobody is locked out by it);
-- a new user's at creation. The trigger below restarts it whenever the stored hash changes (set, change, reset,
-- activation, invitation, any flow: no writer has to remember it), except for a rehash of the same password (an
-- imported hash replaced by argon2id at sign-in): that writer names the user in the transaction-local setting
-- gatehouse.password_rehash, which the trigger consumes.
ALTER TABLE users ADD COLUMN password_changed_at timestamptz NOT NULL DEFAULT now();

CREATE FUNCTION users_password_changed_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('gatehouse.password_rehash', true) = NEW.id::text THEN
    PERFORM set_config('gatehouse.password_rehash', '', true);
  ELSE
    NEW.password_changed_at := now();
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER users_password_changed_at BEFORE UPDATE OF password_hash ON users
  FOR EACH ROW WHEN (NEW.password_hash IS DISTINCT FROM OLD.password_hash)
  EXECUTE FUNCTION users_password_changed_at();

-- The rotation policy: one per scope like the other security policies (0006): the environment-level one (tenant_id
-- NULL) and one per account; an account without its own row follows the environment's. Periods in seconds.
CREATE TABLE password_rotation_policies (
  tenant_id            text COLLATE "C" REFERENCES tenants (tenant_id),
  id                   uuid NOT NULL UNIQUE,
  is_active            boolean NOT NULL,
  rotation_period      integer NOT NULL CHECK (rotation_period BETWEEN 60 AND 315360000),
  notification_period  integer NOT NULL CHECK (notification_period >= 0 AND notification_period <= rotation_period),
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX password_rotation_policies_scope ON password_rotation_policies ((coalesce(tenant_id, '')));

-- The user emails policy: environment level only, at most one row; without it users may change their own email.
CREATE TABLE user_emails_policy (
  singleton           boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  allow_email_change  boolean NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
