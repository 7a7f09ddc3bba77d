import type { Queryable } from '../../storage/db.ts';

export interface SocialRow {
  id: string;
  type: string;
  custom: boolean;
  active: boolean;
  client_id: string;
  secret_enc: string | null;
  redirect_url: string;
  scopes: string;
  options: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export async function list(q: Queryable, custom?: boolean): Promise<SocialRow[]> {
  const where = custom === undefined ? '' : ' WHERE custom = $1';
  return (
    await q.query<SocialRow>(
      `SELECT * FROM social_providers${where} ORDER BY created_at, id`,
      custom === undefined ? [] : [custom],
    )
  ).rows;
}
export async function byType(q: Queryable, type: string): Promise<SocialRow | undefined> {
  return (await q.query<SocialRow>('SELECT * FROM social_providers WHERE type = $1', [type])).rows[0];
}
export async function byId(q: Queryable, id: string): Promise<SocialRow | undefined> {
  return (await q.query<SocialRow>('SELECT * FROM social_providers WHERE id = $1', [id])).rows[0];
}
export async function upsert(q: Queryable, r: Omit<SocialRow, 'created_at' | 'updated_at'>): Promise<SocialRow> {
  const { rows } = await q.query<SocialRow>(
    `INSERT INTO social_providers (id, type, custom, active, client_id, secret_enc, redirect_url, scopes, options)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
     ON CONFLICT (type) DO UPDATE SET active = EXCLUDED.active, client_id = EXCLUDED.client_id,
       secret_enc = COALESCE(EXCLUDED.secret_enc, social_providers.secret_enc), redirect_url = EXCLUDED.redirect_url,
       scopes = EXCLUDED.scopes, options = EXCLUDED.options, updated_at = now()
     RETURNING *`,
    [r.id, r.type, r.custom, r.active, r.client_id, r.secret_enc, r.redirect_url, r.scopes, JSON.stringify(r.options)],
  );
  return rows[0];
}
export async function remove(q: Queryable, where: { type?: string; id?: string }): Promise<boolean> {
  const r = where.id
    ? await q.query('DELETE FROM social_providers WHERE id = $1 AND custom RETURNING id', [where.id])
    : await q.query('DELETE FROM social_providers WHERE type = $1 AND NOT custom RETURNING id', [where.type]);
  return r.rows.length > 0;
}

// -- identities at providers (user_identities) --
export interface IdentityRow {
  provider: string;
  subject: string;
  user_id: string;
  email: string;
}
/** The identity of a provider subject, touched (last sign-in, email the provider now gives). */
export async function touchIdentity(
  q: Queryable,
  provider: string,
  subject: string,
  email: string,
): Promise<IdentityRow | undefined> {
  const { rows } = await q.query<IdentityRow>(
    'UPDATE user_identities SET last_login_at = now(), email = $3 WHERE provider = $1 AND subject = $2 RETURNING provider, subject, user_id, email',
    [provider, subject, email],
  );
  return rows[0];
}
/** The user's identity at a provider, if any. */
export async function identityOf(q: Queryable, userId: string, provider: string): Promise<IdentityRow | undefined> {
  const { rows } = await q.query<IdentityRow>(
    'SELECT provider, subject, user_id, email FROM user_identities WHERE user_id = $1 AND provider = $2',
    [userId, provider],
  );
  return rows[0];
}
/** Links a provider subject to a user; false when the subject or the user's slot for this provider is taken. */
export async function linkIdentity(
  q: Queryable,
  provider: string,
  subject: string,
  userId: string,
  email: string,
): Promise<boolean> {
  const { rows } = await q.query(
    'INSERT INTO user_identities (provider, subject, user_id, email) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING subject',
    [provider, subject, userId, email],
  );
  return rows.length > 0;
}
/** Removes the user's identities at providers other than `keep` (links made before the address was proven). */
export async function unlinkOthers(q: Queryable, userId: string, keep: string): Promise<void> {
  await q.query('DELETE FROM user_identities WHERE user_id = $1 AND provider <> $2', [userId, keep]);
}
