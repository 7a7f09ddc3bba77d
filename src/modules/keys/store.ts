import type { Db, Queryable } from '../../storage/db.ts';

export interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: Record<string, unknown>;
  public_pem: string;
  private_key_enc: string;
  status: 'active' | 'retired';
  created_at: Date;
  retired_at: Date | null;
  verify_until: Date | null;
}

/** Keys that still verify: the active one and retired ones whose grace period has not ended. */
export async function listUsableKeys(db: Queryable): Promise<KeyRow[]> {
  const { rows } = await db.query<KeyRow>(
    `SELECT * FROM signing_keys WHERE status = 'active' OR verify_until > now() ORDER BY created_at DESC`,
  );
  return rows;
}

export async function listAllKeys(db: Queryable): Promise<KeyRow[]> {
  const { rows } = await db.query<KeyRow>('SELECT * FROM signing_keys ORDER BY created_at DESC');
  return rows;
}

/** Retires the active key (verifying for `graceSeconds` more) and inserts the new active one, atomically. */
export async function replaceActiveKey(
  db: Db,
  key: Omit<KeyRow, 'status' | 'created_at' | 'retired_at' | 'verify_until'>,
  graceSeconds: number,
) {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7243002)');
    await tx.query(
      `UPDATE signing_keys SET status = 'retired', retired_at = now(), verify_until = now() + make_interval(secs => $1)
       WHERE status = 'active'`,
      [graceSeconds],
    );
    await tx.query(
      `INSERT INTO signing_keys (kid, alg, public_jwk, public_pem, private_key_enc, status) VALUES ($1, $2, $3, $4, $5, 'active')`,
      [key.kid, key.alg, JSON.stringify(key.public_jwk), key.public_pem, key.private_key_enc],
    );
  });
}
