import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';

/** SQL of application credentials and application clients; secrets arrive here already hashed. */

export interface CredentialsRow {
  app_id: string;
  client_secret_hint: string | null;
  client_secret_created_at: Date | null;
  shared_secret_hint: string | null;
  shared_secret_created_at: Date | null;
}

export interface OpenIdClientRow {
  id: string;
  name: string;
  app_type: string;
  redirect_uris: string[];
  is_first_party: boolean;
  client_secret_hash: string | null;
}

// The OpenID provider reads its client on nearly every request (authorize, resume, token): one prepared statement.
const OPENID_CLIENT = prepared(
  `SELECT a.id::text, a.name, a.app_type, a.redirect_uris, a.is_first_party, c.client_secret_hash
     FROM applications a LEFT JOIN application_credentials c ON c.app_id = a.id
    WHERE a.id = $1 AND a.is_active`,
);

/** An active application with its client secret's hash (null when none), or undefined. */
export async function openIdClientRow(q: Queryable, appId: string): Promise<OpenIdClientRow | undefined> {
  return (await q.query<OpenIdClientRow>(OPENID_CLIENT, [appId])).rows[0];
}

export async function findCredentials(q: Queryable, appId: string): Promise<CredentialsRow | undefined> {
  return (
    await q.query<CredentialsRow>(
      'SELECT app_id::text, client_secret_hint, client_secret_created_at, shared_secret_hint, shared_secret_created_at FROM application_credentials WHERE app_id = $1',
      [appId],
    )
  ).rows[0];
}

/** Replaces one of the two secrets (`client` or `shared`), creating the row on first use; the other is kept. */
export async function setSecret(
  q: Queryable,
  appId: string,
  which: 'client' | 'shared',
  hash: string,
  hint: string,
): Promise<CredentialsRow> {
  const c = which === 'client' ? 'client_secret' : 'shared_secret';
  const { rows } = await q.query<CredentialsRow>(
    `INSERT INTO application_credentials (app_id, ${c}_hash, ${c}_hint, ${c}_created_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (app_id) DO UPDATE SET ${c}_hash = EXCLUDED.${c}_hash, ${c}_hint = EXCLUDED.${c}_hint, ${c}_created_at = EXCLUDED.${c}_created_at
     RETURNING app_id::text, client_secret_hint, client_secret_created_at, shared_secret_hint, shared_secret_created_at`,
    [appId, hash, hint],
  );
  return rows[0];
}

export interface ClientRow {
  id: string;
  app_id: string;
  client_name: string;
  client_type: string;
  redirect_urls: string[];
  external_metadata: Record<string, unknown> | null;
  secret_hint: string;
  created_at: Date;
  updated_at: Date;
}

const CLIENT_COLUMNS =
  'id::text, app_id::text, client_name, client_type, redirect_urls, external_metadata, secret_hint, created_at, updated_at';

export async function insertClient(
  q: Queryable,
  c: Omit<ClientRow, 'created_at' | 'updated_at'> & { secret_hash: string },
): Promise<ClientRow> {
  const { rows } = await q.query<ClientRow>(
    `INSERT INTO application_clients (id, app_id, client_name, client_type, redirect_urls, external_metadata, secret_hash, secret_hint)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8) RETURNING ${CLIENT_COLUMNS}`,
    [
      c.id,
      c.app_id,
      c.client_name,
      c.client_type,
      JSON.stringify(c.redirect_urls),
      c.external_metadata === null ? null : JSON.stringify(c.external_metadata),
      c.secret_hash,
      c.secret_hint,
    ],
  );
  return rows[0];
}

export async function findClient(q: Queryable, id: string): Promise<ClientRow | undefined> {
  return (await q.query<ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM application_clients WHERE id = $1`, [id])).rows[0];
}

export async function clientsOfApp(q: Queryable, appId: string): Promise<ClientRow[]> {
  return (
    await q.query<ClientRow>(
      `SELECT ${CLIENT_COLUMNS} FROM application_clients WHERE app_id = $1 ORDER BY created_at, id`,
      [appId],
    )
  ).rows;
}

export async function updateClient(
  q: Queryable,
  id: string,
  set: { client_name?: string; redirect_urls?: string[]; external_metadata?: Record<string, unknown> },
): Promise<ClientRow | undefined> {
  const { rows } = await q.query<ClientRow>(
    `UPDATE application_clients SET client_name = coalesce($2, client_name), redirect_urls = coalesce($3::jsonb, redirect_urls),
       external_metadata = coalesce($4::jsonb, external_metadata), updated_at = now()
     WHERE id = $1 RETURNING ${CLIENT_COLUMNS}`,
    [
      id,
      set.client_name ?? null,
      set.redirect_urls ? JSON.stringify(set.redirect_urls) : null,
      set.external_metadata ? JSON.stringify(set.external_metadata) : null,
    ],
  );
  return rows[0];
}

export async function deleteClient(q: Queryable, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM application_clients WHERE id = $1', [id])).rowCount > 0;
}
