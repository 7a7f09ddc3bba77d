import type { Queryable } from '../../storage/db.ts';

export interface CredentialRow {
  id: string;
  client_id: string;
  secret_hash: string;
  description: string;
  scopes: string[];
  bootstrap: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function ensureEnvironment(
  db: Queryable,
  id: string,
): Promise<{ id: string; settings: Record<string, unknown> }> {
  await db.query('INSERT INTO environment (id) VALUES ($1) ON CONFLICT (singleton) DO NOTHING', [id]);
  const { rows } = await db.query<{ id: string; settings: Record<string, unknown> }>(
    'SELECT id, settings FROM environment',
  );
  return rows[0];
}

export async function readSettings(q: Queryable): Promise<Record<string, unknown>> {
  const { rows } = await q.query<{ settings: Record<string, unknown> }>('SELECT settings FROM environment');
  return rows[0]?.settings ?? {};
}

/** Merges the given settings into the stored ones in one statement (concurrent updates of other keys survive). */
export async function mergeSettings(db: Queryable, patch: Record<string, unknown>): Promise<void> {
  await db.query('UPDATE environment SET settings = settings || $1::jsonb, updated_at = now()', [
    JSON.stringify(patch),
  ]);
}

export async function findCredentialByClientId(db: Queryable, clientId: string): Promise<CredentialRow | undefined> {
  const { rows } = await db.query<CredentialRow>('SELECT * FROM env_credentials WHERE client_id = $1', [clientId]);
  return rows[0];
}

export async function findCredential(db: Queryable, id: string): Promise<CredentialRow | undefined> {
  const { rows } = await db.query<CredentialRow>('SELECT * FROM env_credentials WHERE id = $1', [id]);
  return rows[0];
}

export async function hasBootstrapCredential(db: Queryable): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM env_credentials WHERE bootstrap LIMIT 1');
  return rows.length > 0;
}

export async function insertCredential(
  db: Queryable,
  c: { id: string; clientId: string; secretHash: string; description: string; scopes: string[]; bootstrap: boolean },
): Promise<CredentialRow> {
  const { rows } = await db.query<CredentialRow>(
    `INSERT INTO env_credentials (id, client_id, secret_hash, description, scopes, bootstrap)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [c.id, c.clientId, c.secretHash, c.description, c.scopes, c.bootstrap],
  );
  return rows[0];
}

/** A changed operator secret replaces the stored hash and re-enables the credential. */
export async function replaceSecret(db: Queryable, id: string, secretHash: string): Promise<void> {
  await db.query('UPDATE env_credentials SET secret_hash = $2, revoked_at = NULL WHERE id = $1', [id, secretHash]);
}

export async function listCredentials(db: Queryable): Promise<CredentialRow[]> {
  const { rows } = await db.query<CredentialRow>('SELECT * FROM env_credentials ORDER BY created_at, id');
  return rows;
}

export async function revokeCredential(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query('UPDATE env_credentials SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
  return r.rowCount > 0;
}

export async function touchCredential(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE env_credentials SET last_used_at = now() WHERE id = $1', [id]);
}
