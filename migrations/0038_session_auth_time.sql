-- When the user of a session last proved who they are (sign-in, or a step-up re-authentication): the access tokens of
-- the session carry it as `auth_time`, and identity-changing routes require it to be recent. Existing sessions keep
-- their creation time; new ones get the time of the sign-in that inserts them.
ALTER TABLE sessions ADD COLUMN auth_time timestamptz;
UPDATE sessions SET auth_time = created_at;
ALTER TABLE sessions ALTER COLUMN auth_time SET DEFAULT now();
ALTER TABLE sessions ALTER COLUMN auth_time SET NOT NULL;
