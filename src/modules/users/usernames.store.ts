import type { Queryable } from '../../storage/db.ts';

export interface UsernameListParams {
  limit: number;
  page: number;
  /** Only members of this account. */
  tenantId?: string;
  prefix?: string;
  userIds?: string[];
  sortBy: 'userId' | 'username';
  order: 'ASC' | 'DESC';
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const SORT = { userId: 'u.id', username: '(lower(u.username) COLLATE "C")' } as const;

/** One page of users that have a username, with the total; ties broken by id. */
export async function listUsernames(
  q: Queryable,
  p: UsernameListParams,
): Promise<{ rows: { id: string; username: string }[]; total: number }> {
  const where = ['u.username IS NOT NULL'];
  const params: unknown[] = [];
  const add = (sql: (n: number) => string, v: unknown) => {
    params.push(v);
    where.push(sql(params.length));
  };
  if (p.tenantId)
    add((n) => `EXISTS (SELECT 1 FROM user_tenants ut WHERE ut.tenant_id = $${n} AND ut.user_id = u.id)`, p.tenantId);
  // The unique index is on lower(username): a prefix match on it (LIKE with a literal prefix, "C" collation) uses it.
  if (p.prefix) add((n) => `(lower(u.username) COLLATE "C") LIKE $${n}`, `${escapeLike(p.prefix.toLowerCase())}%`);
  if (p.userIds) add((n) => `u.id = ANY($${n}::uuid[])`, p.userIds);
  const whereSql = where.join(' AND ');
  const { rows: c } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM users u WHERE ${whereSql}`, params);
  const { rows } = await q.query<{ id: string; username: string }>(
    `SELECT u.id, u.username FROM users u WHERE ${whereSql}
     ORDER BY ${SORT[p.sortBy]} ${p.order}, u.id ${p.order} LIMIT ${p.limit} OFFSET ${p.page * p.limit}`,
    params,
  );
  return { rows, total: c[0].n };
}

/** Sets (or clears, null) a user's username; the unique index on lower(username) refuses a taken one (23505). */
export async function setUsername(q: Queryable, userId: string, username: string | null): Promise<void> {
  await q.query('UPDATE users SET username = $2, updated_at = now() WHERE id = $1', [userId, username]);
}
