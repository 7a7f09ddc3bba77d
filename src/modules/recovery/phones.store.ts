import type { Queryable } from '../../storage/db.ts';

/** A row of `user_phone_numbers` (0005, id/updated_at from 0022). */
export interface PhoneRow {
  id: string;
  phone_number: string;
  user_id: string;
  is_primary: boolean;
  verified: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface PhoneCodeRow {
  id: string;
  purpose: 'verify' | 'delete';
  user_id: string;
  phone_number: string;
  code_hash: string;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
}

export interface PhoneListFilter {
  /** Only users who are members of this account (user tokens). */
  tenantId?: string;
  phoneNumber?: string;
  userIds?: string[];
  sortBy: 'userId' | 'phoneNumber';
  order: 'ASC' | 'DESC';
  limit: number;
  offset: number;
}

export async function list(q: Queryable, f: PhoneListFilter): Promise<{ rows: PhoneRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: number) => string, v: unknown) => (params.push(v), where.push(sql(params.length)));
  if (f.tenantId !== undefined)
    add(
      (n) => `EXISTS (SELECT 1 FROM user_tenants ut WHERE ut.tenant_id = $${n} AND ut.user_id = p.user_id)`,
      f.tenantId,
    );
  if (f.phoneNumber)
    add((n) => `p.phone_number LIKE $${n} ESCAPE '\\'`, `%${f.phoneNumber.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (f.userIds?.length) add((n) => `p.user_id::text = ANY($${n}::text[])`, f.userIds);
  const cond = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const col = f.sortBy === 'userId' ? 'p.user_id' : 'p.phone_number';
  const dir = f.order === 'DESC' ? 'DESC' : 'ASC';
  const { rows } = await q.query<PhoneRow & { total: string }>(
    `SELECT p.*, count(*) OVER () AS total FROM user_phone_numbers p ${cond}
     ORDER BY ${col} ${dir}, p.phone_number ${dir} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, f.limit, f.offset],
  );
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && f.offset > 0) {
    total = Number(
      (await q.query<{ n: string }>(`SELECT count(*) AS n FROM user_phone_numbers p ${cond}`, params)).rows[0].n,
    );
  }
  return { rows: rows.map(({ total: _t, ...r }) => r), total };
}

export async function ofUser(q: Queryable, userId: string): Promise<PhoneRow[]> {
  const { rows } = await q.query<PhoneRow>(
    'SELECT * FROM user_phone_numbers WHERE user_id = $1 ORDER BY is_primary DESC, created_at, phone_number',
    [userId],
  );
  return rows;
}

export async function byNumber(q: Queryable, phone: string, lock = false): Promise<PhoneRow | undefined> {
  const { rows } = await q.query<PhoneRow>(
    `SELECT * FROM user_phone_numbers WHERE phone_number = $1${lock ? ' FOR UPDATE' : ''}`,
    [phone],
  );
  return rows[0];
}

export async function byId(q: Queryable, id: string, lock = false): Promise<PhoneRow | undefined> {
  const { rows } = await q.query<PhoneRow>(
    `SELECT * FROM user_phone_numbers WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0];
}

/** Adds a number (the user's first one becomes primary); undefined when another user holds it (nothing changes). */
export async function insert(
  q: Queryable,
  userId: string,
  phone: string,
  verified: boolean,
): Promise<PhoneRow | undefined> {
  const { rows } = await q.query<PhoneRow>(
    `INSERT INTO user_phone_numbers (phone_number, user_id, is_primary, verified)
     VALUES ($1, $2, NOT EXISTS (SELECT 1 FROM user_phone_numbers WHERE user_id = $2), $3)
     ON CONFLICT (phone_number) DO NOTHING RETURNING *`,
    [phone, userId, verified],
  );
  return rows[0];
}

export async function markVerified(q: Queryable, id: string): Promise<PhoneRow> {
  const { rows } = await q.query<PhoneRow>(
    'UPDATE user_phone_numbers SET verified = true, updated_at = now() WHERE id = $1 RETURNING *',
    [id],
  );
  return rows[0];
}

/** Removes a number; when it was the primary one, the user's oldest remaining number becomes primary. */
export async function remove(q: Queryable, row: PhoneRow): Promise<void> {
  await q.query('DELETE FROM user_phone_numbers WHERE id = $1', [row.id]);
  if (row.is_primary) {
    await q.query(
      `UPDATE user_phone_numbers SET is_primary = true, updated_at = now()
       WHERE id = (SELECT id FROM user_phone_numbers WHERE user_id = $1 ORDER BY created_at, phone_number LIMIT 1)`,
      [row.user_id],
    );
  }
}

// -- codes --

export async function insertCode(
  q: Queryable,
  c: {
    id: string;
    purpose: PhoneCodeRow['purpose'];
    userId: string;
    phone: string;
    codeHash: string;
    ttlSeconds: number;
  },
): Promise<void> {
  // A new code replaces the user's earlier unused ones of the same purpose.
  await q.query('UPDATE phone_codes SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL', [
    c.userId,
    c.purpose,
  ]);
  await q.query(
    `INSERT INTO phone_codes (id, purpose, user_id, phone_number, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [c.id, c.purpose, c.userId, c.phone, c.codeHash, c.ttlSeconds],
  );
}

export async function findCode(q: Queryable, id: string): Promise<PhoneCodeRow | undefined> {
  const { rows } = await q.query<PhoneCodeRow>('SELECT * FROM phone_codes WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

export async function countAttempt(q: Queryable, id: string, burn: boolean): Promise<void> {
  await q.query(`UPDATE phone_codes SET attempts = attempts + 1${burn ? ', used_at = now()' : ''} WHERE id = $1`, [id]);
}

export async function useCode(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE phone_codes SET used_at = now() WHERE id = $1', [id]);
}
