-- The write a failed sign-in makes for an identifier that names no user (src/modules/auth/login.service.ts): a known
-- user's failure commits a failure count, so an unknown one commits a row update too (same transaction shape, same
-- commit and WAL flush), and the answer's time does not tell whether the email has a user. Slots spread the writes
-- of concurrent attempts over rows; the counts mean nothing beyond that.
CREATE TABLE sign_in_decoys (
  slot integer PRIMARY KEY,
  failed_attempts bigint NOT NULL DEFAULT 0,
  -- What the known path's event would carry (the identifier tried): written as it writes its event's data.
  data jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO sign_in_decoys (slot) SELECT generate_series(0, 63);
