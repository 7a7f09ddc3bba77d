import type { Queryable } from '../../storage/db.ts';

// The user's phone numbers (user_phone_numbers) as rows: the phone routes (recovery) list, add, verify and remove
// them; the passwordless SMS code and the MFA adoption of migrated factors read the primary one.

/** A row of `user_phone_numbers` (0005, id/updated_at from 0022). */
export interface PhoneNumberRow {
  id: string;
  phone_number: string;
  user_id: string;
  is_primary: boolean;
  verified: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface PhoneNumberFilter {
  /** Only users who are members of this account (user tokens). */
  tenantId?: string;
  phoneNumber?: string;
  userIds?: string[];
  sortBy: 'userId' | 'phoneNumber';
  order: 'ASC' | 'DESC';
  limit: number;
  offset: number;
}

/** The user's primary number (else the oldest) as a subquery, the user's id being the SQL `userExpr`. */
export const primaryPhoneSql = (userExpr: string) =>
  `(SELECT p.phone_number FROM user_phone_numbers p
     WHERE p.user_id = ${userExpr} ORDER BY p.is_primary DESC, p.created_at LIMIT 1)`;

export async function primaryPhone(q: Queryable, userId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ phone_number: string | null }>(`SELECT ${primaryPhoneSql('$1')} AS phone_number`, [
    userId,
  ]);
  return rows[0]?.phone_number ?? undefined;
}

/** The user's numbers as text, the primary first (the user record's `phoneNumber`). */
export async function numbersOf(q: Queryable, userId: string): Promise<string[]> {
  const { rows } = await q.query<{ phone_number: string }>(
    'SELECT phone_number FROM user_phone_numbers WHERE user_id = $1 ORDER BY is_primary DESC, created_at, phone_number',
    [userId],
  );
  return rows.map((r) => r.phone_number);
}

/** Adds a phone number; the first one becomes primary. Returns false when another user holds it. */
export async function addPhone(q: Queryable, userId: string, phone: string): Promise<boolean> {
  const { rows } = await q.query<{ user_id: string }>(
    `INSERT INTO user_phone_numbers (phone_number, user_id, is_primary)
     VALUES ($1, $2, NOT EXISTS (SELECT 1 FROM user_phone_numbers WHERE user_id = $2))
     ON CONFLICT (phone_number) DO UPDATE SET phone_number = EXCLUDED.phone_number RETURNING user_id`,
    [phone, userId],
  );
  return rows[0]?.user_id === userId;
}

export async function list(q: Queryable, f: PhoneNumberFilter): Promise<{ rows: PhoneNumberRow[]; total: number }> {
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
  const { rows } = await q.query<PhoneNumberRow & { total: string }>(
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

export async function ofUser(q: Queryable, userId: string): Promise<PhoneNumberRow[]> {
  const { rows } = await q.query<PhoneNumberRow>(
    'SELECT * FROM user_phone_numbers WHERE user_id = $1 ORDER BY is_primary DESC, created_at, phone_number',
    [userId],
  );
  return rows;
}

export async function byNumber(q: Queryable, phone: string, lock = false): Promise<PhoneNumberRow | undefined> {
  const { rows } = await q.query<PhoneNumberRow>(
    `SELECT * FROM user_phone_numbers WHERE phone_number = $1${lock ? ' FOR UPDATE' : ''}`,
    [phone],
  );
  return rows[0];
}

export async function byId(q: Queryable, id: string, lock = false): Promise<PhoneNumberRow | undefined> {
  const { rows } = await q.query<PhoneNumberRow>(
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
): Promise<PhoneNumberRow | undefined> {
  const { rows } = await q.query<PhoneNumberRow>(
    `INSERT INTO user_phone_numbers (phone_number, user_id, is_primary, verified)
     VALUES ($1, $2, NOT EXISTS (SELECT 1 FROM user_phone_numbers WHERE user_id = $2), $3)
     ON CONFLICT (phone_number) DO NOTHING RETURNING *`,
    [phone, userId, verified],
  );
  return rows[0];
}

export async function markVerified(q: Queryable, id: string): Promise<PhoneNumberRow> {
  const { rows } = await q.query<PhoneNumberRow>(
    'UPDATE user_phone_numbers SET verified = true, updated_at = now() WHERE id = $1 RETURNING *',
    [id],
  );
  return rows[0];
}

/** Removes a number; when it was the primary one, the user's oldest remaining number becomes primary. */
export async function remove(q: Queryable, row: PhoneNumberRow): Promise<void> {
  await q.query('DELETE FROM user_phone_numbers WHERE id = $1', [row.id]);
  if (row.is_primary) {
    await q.query(
      `UPDATE user_phone_numbers SET is_primary = true, updated_at = now()
       WHERE id = (SELECT id FROM user_phone_numbers WHERE user_id = $1 ORDER BY created_at, phone_number LIMIT 1)`,
      [row.user_id],
    );
  }
}
