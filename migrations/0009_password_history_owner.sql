-- Password history belongs to a user: delete it with the user (every path that removes a user, including account
-- removal, is then covered by the database rather than by each caller remembering to).
DELETE FROM password_history h WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id::text = h.user_id);
ALTER TABLE password_history ALTER COLUMN user_id TYPE uuid USING user_id::uuid;
ALTER TABLE password_history ADD CONSTRAINT password_history_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE;
