import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
// `fragment`: the storage/sql.ts builder (`sql` here names the token statements below).
import { sql as fragment, type Sql } from '../../storage/sql.ts';
import { ENVIRONMENT_SETTINGS_SQL } from '../environment/index.ts';
import { permissionKeysSql, roleKeysSql, rolePermissionKeysSql } from '../roles/index.ts';
import { userTablesSql } from '../users/index.ts';

export type TokenKind = 'client' | 'access';

export interface TokenRow {
  tenant_id: string;
  id: string;
  kind: TokenKind;
  user_id: string | null;
  secret_hash: string | null;
  description: string;
  metadata: Record<string, unknown>;
  role_ids: string[];
  permission_ids: string[];
  created_by_user_id: string | null;
  created_at: Date;
  expires_at: Date | null;
}

/**
 * A token with what is needed to use it, read in one statement: the row, the membership state of a user token, the
 * environment settings, and the claims — role keys (the token's roles for an account token, the user's roles in the
 * account for a user token), the permission keys those roles hold, and the keys of the token's own permission ids.
 */
export interface LiveTokenRow extends TokenRow {
  member: boolean | null;
  is_disabled: boolean | null;
  temporary_expiration_date: Date | null;
  settings: Record<string, unknown> | null;
  role_keys: string[];
  role_permission_keys: string[];
  token_permission_keys: string[];
  /** For user tokens: the user's role ids in the account (role sources may add more). */
  user_role_ids: string[];
}

/**
 * The token statements, built on first use: this module and the users module import each other (through auth), so
 * the users module's subqueries may not be evaluated yet when this file loads.
 */
let statements: { liveToken: string; tokenState: string } | undefined;
function sql() {
  if (statements) return statements;
  const memberships = `LEFT JOIN (${userTablesSql.memberships}) ut
    ON ut.tenant_id = t.tenant_id AND ut.user_id = t.user_id AND NOT ut.pending`;
  const liveSelect = `
  SELECT t.*, ut.user_id IS NOT NULL AS member, ut.is_disabled, ut.temporary_expiration_date,
         (${ENVIRONMENT_SETTINGS_SQL}) AS settings,
         ${roleKeysSql('= ANY(rid.ids)')} AS role_keys,
         ${rolePermissionKeysSql('= ANY(rid.ids)')} AS role_permission_keys,
         ${permissionKeysSql('= ANY(t.permission_ids)')} AS token_permission_keys,
         CASE WHEN t.user_id IS NULL THEN '{}'::uuid[] ELSE rid.ids END AS user_role_ids
  FROM api_tokens t
  ${memberships}
  CROSS JOIN LATERAL (
    SELECT CASE WHEN t.user_id IS NULL THEN t.role_ids
                ELSE ARRAY(SELECT ur.role_id FROM (${userTablesSql.userRoles}) ur
                           WHERE ur.tenant_id = t.tenant_id AND ur.user_id = t.user_id) END AS ids
  ) rid`;
  statements = {
    liveToken: prepared(`${liveSelect} WHERE t.id = $1 AND t.kind = $2`),
    tokenState: `SELECT t.tenant_id, t.id, t.user_id, t.expires_at, ut.user_id IS NOT NULL AS member, ut.is_disabled,
            ut.temporary_expiration_date, (${ENVIRONMENT_SETTINGS_SQL}) AS settings
     FROM api_tokens t ${memberships}
     WHERE t.id = $1 AND t.kind = $2`,
  };
  return statements;
}

/** The token with its claims, by id alone (the exchange knows no account); one indexed lookup. */
export async function liveToken(q: Queryable, id: string, kind: TokenKind): Promise<LiveTokenRow | undefined> {
  const { rows } = await q.query<LiveTokenRow>(sql().liveToken, [id, kind]);
  return rows[0];
}

export type TokenState = Pick<
  LiveTokenRow,
  'tenant_id' | 'id' | 'user_id' | 'expires_at' | 'member' | 'is_disabled' | 'temporary_expiration_date' | 'settings'
>;

/** What the guard needs per request: is the token still there, unexpired, its user still a member. One indexed read. */
export async function tokenState(q: Queryable, id: string, kind: TokenKind): Promise<TokenState | undefined> {
  const { rows } = await q.query<TokenState>(sql().tokenState, [id, kind]);
  return rows[0];
}

/** Role keys and permission keys of extra role ids (role sources such as groups), one statement. */
export async function claimsOfRoles(
  q: Queryable,
  roleIds: string[],
): Promise<{ roles: string[]; permissions: string[] }> {
  const { rows } = await q.query<{ roles: string[]; permissions: string[] }>(
    `SELECT ${roleKeysSql('= ANY($1::uuid[])')} AS roles, ${rolePermissionKeysSql('= ANY($1::uuid[])')} AS permissions`,
    [roleIds],
  );
  return rows[0];
}

export async function insertToken(q: Queryable, t: Omit<TokenRow, 'created_at'>): Promise<TokenRow> {
  const { rows } = await q.query<TokenRow>(
    `INSERT INTO api_tokens (tenant_id, id, kind, user_id, secret_hash, description, metadata, role_ids, permission_ids, created_by_user_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      t.tenant_id,
      t.id,
      t.kind,
      t.user_id,
      t.secret_hash,
      t.description,
      JSON.stringify(t.metadata),
      t.role_ids,
      t.permission_ids,
      t.created_by_user_id,
      t.expires_at,
    ],
  );
  return rows[0];
}

/** Tokens of an account (userId null: the account's own) of one kind, oldest first. */
export async function listTokens(
  q: Queryable,
  tenantId: string,
  userId: string | null,
  kind: TokenKind,
): Promise<TokenRow[]> {
  const { rows } = await q.query<TokenRow>(
    `SELECT * FROM api_tokens WHERE tenant_id = $1 AND user_id IS NOT DISTINCT FROM $2 AND kind = $3 ORDER BY created_at, id`,
    [tenantId, userId, kind],
  );
  return rows;
}

export async function findToken(
  q: Queryable,
  tenantId: string,
  id: string,
  lock = false,
): Promise<TokenRow | undefined> {
  const { rows } = await q.query<TokenRow>(
    `SELECT * FROM api_tokens WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, id],
  );
  return rows[0];
}

export async function updateToken(
  q: Queryable,
  tenantId: string,
  id: string,
  v: { description?: string; metadata?: Record<string, unknown>; role_ids?: string[]; permission_ids?: string[] },
): Promise<TokenRow> {
  const { rows } = await q.query<TokenRow>(
    `UPDATE api_tokens SET description = coalesce($3, description), metadata = coalesce($4::jsonb, metadata),
            role_ids = coalesce($5::uuid[], role_ids), permission_ids = coalesce($6::uuid[], permission_ids)
     WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    [
      tenantId,
      id,
      v.description ?? null,
      v.metadata ? JSON.stringify(v.metadata) : null,
      v.role_ids ?? null,
      v.permission_ids ?? null,
    ],
  );
  return rows[0];
}

export async function deleteToken(
  q: Queryable,
  tenantId: string,
  id: string,
  userId: string | null,
  kind: TokenKind,
): Promise<boolean> {
  const r = await q.query(
    'DELETE FROM api_tokens WHERE tenant_id = $1 AND id = $2 AND user_id IS NOT DISTINCT FROM $3 AND kind = $4',
    [tenantId, id, userId, kind],
  );
  return r.rowCount > 0;
}

/** Account removal: its tokens (and through the FK their refresh tokens) go; its act records stay for the record. */
export async function deleteAccountTokens(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM api_tokens WHERE tenant_id = $1', [tenantId]);
}

/** Ids of the account's access tokens that have not expired. */
export async function activeAccessTokenIds(q: Queryable, tenantId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM api_tokens WHERE tenant_id = $1 AND kind = 'access' AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at, id`,
    [tenantId],
  );
  return rows.map((r) => r.id);
}

// -- refresh tokens --

/**
 * Stores a new refresh token and drops the API token's oldest beyond `keep` in one statement. The DELETE does not
 * see the row its own statement inserts, so it keeps the newest `keep - 1` existing ones plus the new one. `audit`,
 * when given, is the request's audit entry (a WITH item), stored by the same statement.
 */
export async function addRefreshToken(
  q: Queryable,
  r: { tenantId: string; apiTokenId: string; tokenHash: string; expiresAt: Date },
  keep: number,
  audit?: { item: () => Sql },
): Promise<void> {
  const tenant = fragment.param(r.tenantId);
  const token = fragment.param(r.apiTokenId);
  // The text is constant per shape (with or without the audit item): marked for preparing.
  const { text, values } = fragment`WITH added AS (
     INSERT INTO api_token_refresh_tokens (token_hash, tenant_id, api_token_id, expires_at)
     VALUES (${r.tokenHash}, ${tenant}, ${token}, ${r.expiresAt}))${
       audit
         ? fragment`,
   ${audit.item()}`
         : fragment.raw('')
     }
   DELETE FROM api_token_refresh_tokens WHERE token_hash IN (
     SELECT token_hash FROM api_token_refresh_tokens WHERE tenant_id = ${tenant} AND api_token_id = ${token}
      ORDER BY seq DESC OFFSET ${keep - 1})`.build();
  await q.query(prepared(text), values);
}

const TAKE_REFRESH = prepared(
  'DELETE FROM api_token_refresh_tokens WHERE token_hash = $1 RETURNING tenant_id, api_token_id, expires_at',
);

/** Consumes a refresh token (rotation): deleted and answered, or undefined when unknown or already used. */
export async function takeRefreshToken(
  q: Queryable,
  tokenHash: string,
): Promise<{ tenant_id: string; api_token_id: string; expires_at: Date } | undefined> {
  const { rows } = await q.query<{ tenant_id: string; api_token_id: string; expires_at: Date }>(TAKE_REFRESH, [
    tokenHash,
  ]);
  return rows[0];
}

export async function countRefreshTokens(q: Queryable, tenantId: string, apiTokenId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_token_refresh_tokens WHERE tenant_id = $1 AND api_token_id = $2',
    [tenantId, apiTokenId],
  );
  return rows[0].n;
}

// -- impersonation and delegation records --

export interface ActRow {
  tenant_id: string;
  id: string;
  kind: 'impersonation' | 'delegation';
  user_id: string;
  actor_type: string;
  actor_id: string;
  reason: string;
  created_at: Date;
  expires_at: Date;
}

export async function insertAct(q: Queryable, a: Omit<ActRow, 'created_at'>): Promise<ActRow> {
  const { rows } = await q.query<ActRow>(
    `INSERT INTO token_acts (tenant_id, id, kind, user_id, actor_type, actor_id, reason, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [a.tenant_id, a.id, a.kind, a.user_id, a.actor_type, a.actor_id, a.reason, a.expires_at],
  );
  return rows[0];
}

export async function findAct(q: Queryable, id: string): Promise<ActRow | undefined> {
  const { rows } = await q.query<ActRow>('SELECT * FROM token_acts WHERE id = $1', [id]);
  return rows[0];
}

export async function listActs(q: Queryable, tenantId: string | undefined, limit: number): Promise<ActRow[]> {
  const { rows } = tenantId
    ? await q.query<ActRow>('SELECT * FROM token_acts WHERE tenant_id = $1 ORDER BY created_at DESC, id LIMIT $2', [
        tenantId,
        limit,
      ])
    : await q.query<ActRow>('SELECT * FROM token_acts ORDER BY created_at DESC, id LIMIT $1', [limit]);
  return rows;
}

/** Whether the act `id` is live: for this user and account, and unexpired. */
export async function actLive(q: Queryable, id: string, userId: string, tenantId: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM token_acts WHERE id = $1 AND user_id = $2 AND tenant_id = $3 AND expires_at > now()',
    [id, userId, tenantId],
  );
  return rows.length > 0;
}
