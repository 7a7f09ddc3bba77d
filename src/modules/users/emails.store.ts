import type { Queryable } from '../../storage/db.ts';

/** A secondary address (user_emails); the primary one is users.email. */
export interface EmailRow {
  id: string;
  user_id: string;
  email: string;
  verified: boolean;
  code_hash: string | null;
  code_expires_at: Date | null;
  code_attempts: number;
  created_at: Date;
  updated_at: Date;
}

/** A listed address: the primary (id = the user's id) or a secondary one. */
export interface ListedEmail {
  id: string;
  user_id: string;
  email: string;
  verified: boolean;
  is_primary: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Serialises every claim of one address (both tables) until the transaction ends. */
export async function lockAddress(q: Queryable, email: string): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(7243434, hashtext($1))', [email]);
}

/** The user holding an address, as primary or secondary; undefined when free. */
export async function ownerOf(q: Queryable, email: string): Promise<string | undefined> {
  const { rows } = await q.query<{ user_id: string }>(
    'SELECT id AS user_id FROM users WHERE email = $1 UNION ALL SELECT user_id FROM user_emails WHERE lower(email) = $1 LIMIT 1',
    [email],
  );
  return rows[0]?.user_id;
}

export async function findOfUser(
  q: Queryable,
  userId: string,
  by: { id?: string; email?: string },
  lock = false,
): Promise<EmailRow | undefined> {
  const [col, value] = by.id !== undefined ? ['id', by.id] : ['lower(email)', by.email!];
  const { rows } = await q.query<EmailRow>(
    `SELECT * FROM user_emails WHERE user_id = $1 AND ${col} = $2${lock ? ' FOR UPDATE' : ''}`,
    [userId, value],
  );
  return rows[0];
}

export async function insert(
  q: Queryable,
  r: { id: string; userId: string; email: string; verified: boolean },
): Promise<EmailRow> {
  const { rows } = await q.query<EmailRow>(
    'INSERT INTO user_emails (id, user_id, email, verified) VALUES ($1, $2, $3, $4) RETURNING *',
    [r.id, r.userId, r.email, r.verified],
  );
  return rows[0];
}

/** A new code replaces the pending one (and its attempt count). */
export async function setCode(q: Queryable, id: string, codeHash: string, ttlSeconds: number): Promise<void> {
  await q.query(
    'UPDATE user_emails SET code_hash = $2, code_expires_at = now() + make_interval(secs => $3), code_attempts = 0, updated_at = now() WHERE id = $1',
    [id, codeHash, ttlSeconds],
  );
}

export async function countAttempt(q: Queryable, id: string, burn: boolean): Promise<void> {
  await q.query(
    `UPDATE user_emails SET code_attempts = code_attempts + 1${burn ? ', code_hash = NULL' : ''} WHERE id = $1`,
    [id],
  );
}

export async function markVerified(q: Queryable, id: string): Promise<EmailRow> {
  const { rows } = await q.query<EmailRow>(
    'UPDATE user_emails SET verified = true, code_hash = NULL, code_expires_at = NULL, code_attempts = 0, updated_at = now() WHERE id = $1 RETURNING *',
    [id],
  );
  return rows[0];
}

/** The primary swap: the secondary row takes the old primary address (verified as it was). */
export async function replaceAddress(q: Queryable, id: string, email: string, verified: boolean): Promise<void> {
  await q.query(
    'UPDATE user_emails SET email = $2, verified = $3, code_hash = NULL, code_expires_at = NULL, code_attempts = 0, updated_at = now() WHERE id = $1',
    [id, email, verified],
  );
}

export async function remove(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM user_emails WHERE id = $1', [id]);
}

const LISTED = `SELECT u.id, u.id AS user_id, u.email, u.verified, true AS is_primary, u.created_at, u.updated_at FROM users u WHERE u.id = ANY($1::uuid[]) AND u.email IS NOT NULL
  UNION ALL SELECT e.id, e.user_id, e.email, e.verified, false, e.created_at, e.updated_at FROM user_emails e WHERE e.user_id = ANY($1::uuid[])`;

/** A user's addresses: the primary first, then the others by age. */
export async function listOfUser(q: Queryable, userId: string): Promise<ListedEmail[]> {
  const { rows } = await q.query<ListedEmail>(
    `SELECT * FROM (${LISTED}) x ORDER BY is_primary DESC, created_at, email`,
    [[userId]],
  );
  return rows;
}

export interface ListFilter {
  userIds?: string[];
  email?: string;
  tenantId?: string;
  sortBy: 'userId' | 'email';
  order: 'ASC' | 'DESC';
  limit: number;
  page: number;
}

/** Every address of the environment (or of one account's members), filtered, sorted and paged. */
export async function list(q: Queryable, f: ListFilter): Promise<{ items: ListedEmail[]; total: number }> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (f.userIds) where.push(`x.user_id = ANY($${params.push(f.userIds)}::uuid[])`);
  if (f.email) where.push(`lower(x.email) = $${params.push(f.email)}`);
  if (f.tenantId)
    where.push(
      `EXISTS (SELECT 1 FROM user_tenants m WHERE m.user_id = x.user_id AND m.tenant_id = $${params.push(f.tenantId)})`,
    );
  const all = `SELECT u.id, u.id AS user_id, u.email, u.verified, true AS is_primary, u.created_at, u.updated_at FROM users u WHERE u.email IS NOT NULL
    UNION ALL SELECT e.id, e.user_id, e.email, e.verified, false, e.created_at, e.updated_at FROM user_emails e`;
  const filtered = `FROM (${all}) x${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  const total = Number((await q.query<{ n: string }>(`SELECT count(*) AS n ${filtered}`, params)).rows[0].n);
  const dir = f.order === 'DESC' ? 'DESC' : 'ASC';
  const order = f.sortBy === 'userId' ? `x.user_id ${dir}, x.is_primary DESC, x.email ${dir}` : `x.email ${dir}, x.id`;
  const { rows } = await q.query<ListedEmail>(
    `SELECT x.* ${filtered} ORDER BY ${order} LIMIT $${params.push(f.limit)} OFFSET $${params.push(f.limit * f.page)}`,
    params,
  );
  return { items: rows, total };
}
