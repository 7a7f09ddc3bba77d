-- A membership made by an account administrator for a user who already exists waits for that user's consent: it
-- gives no access (no token claim, no sign-in, no switch, no sub-account reach) until accepted by the emailed
-- invitation or by the user's own signed-in acceptance.
ALTER TABLE user_tenants ADD COLUMN pending boolean NOT NULL DEFAULT false;

-- A password chosen by an account administrator (user token) for someone else: it stops working once the owner proves
-- the mailbox (email verification, activation, invitation link or code, emailed reset link). Environment-set
-- passwords are never temporary (the environment owns every account).
ALTER TABLE users ADD COLUMN password_temporary boolean NOT NULL DEFAULT false;
