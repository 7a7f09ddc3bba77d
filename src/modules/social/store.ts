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
  return (await q.query<SocialRow>(`SELECT * FROM social_providers${where} ORDER BY created_at, id`, custom === undefined ? [] : [custom])).rows;
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
  const r = where.id ? await q.query('DELETE FROM social_providers WHERE id = $1 AND custom RETURNING id', [where.id]) : await q.query('DELETE FROM social_providers WHERE type = $1 AND NOT custom RETURNING id', [where.type]);
  return r.rows.length > 0;
}
