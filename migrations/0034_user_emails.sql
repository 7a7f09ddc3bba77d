-- Secondary email addresses of users (routes.md "User Management", /identity/resources/users/emails/v1). The primary
-- address stays in users.email; this table holds the others, each verified or not. An address belongs to one user in
-- the environment, across users.email AND user_emails: the unique index covers this table, the triggers below the
-- two tables against each other (the service also takes a per-address advisory lock in its transaction).
CREATE TABLE user_emails (
  id               uuid PRIMARY KEY,
  user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email            text NOT NULL,
  verified         boolean NOT NULL DEFAULT false,
  -- The pending verification code of an unverified address: HMAC-SHA256 under a KEK-derived key, never the code.
  code_hash        text,
  code_expires_at  timestamptz,
  code_attempts    integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_emails_email ON user_emails (lower(email));
CREATE INDEX user_emails_user ON user_emails (user_id, created_at);

-- users.email may not take an address another user holds as a secondary one (any writer: create, change, sign-up).
CREATE FUNCTION user_emails_guard_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM user_emails WHERE lower(email) = lower(NEW.email) AND user_id <> NEW.id) THEN
    RAISE EXCEPTION 'email % belongs to another user', NEW.email USING ERRCODE = 'unique_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER users_email_not_secondary BEFORE INSERT OR UPDATE OF email ON users
  FOR EACH ROW EXECUTE FUNCTION user_emails_guard_users();

-- A secondary address may not be another user's primary one.
CREATE FUNCTION user_emails_guard_secondary() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM users WHERE email = lower(NEW.email) AND id <> NEW.user_id) THEN
    RAISE EXCEPTION 'email % belongs to another user', NEW.email USING ERRCODE = 'unique_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER user_emails_not_primary BEFORE INSERT OR UPDATE OF email ON user_emails
  FOR EACH ROW EXECUTE FUNCTION user_emails_guard_secondary();
