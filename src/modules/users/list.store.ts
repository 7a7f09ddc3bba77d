import type { Queryable } from '../../storage/db.ts';
import type { UserRow } from './store.ts';

export interface UserListParams {
  limit: number;
  page: number;
  tenantId?: string;
  email?: string;
  filter?: string;
  username?: string;
  phone?: string;
  sortBy: 'createdAt' | 'email' | 'name';
  order: 'ASC' | 'DESC';
}

const SORT: Record<UserListParams['sortBy'], string> = {
  createdAt: 'u.created_at',
  email: 'u.email',
  name: '(lower(u.name) COLLATE "C")',
};
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One page of users (optionally of one account) and the total; ties broken by id for a stable order. */
export async function listUsers(q: Queryable, p: UserListParams): Promise<{ rows: UserRow[]; total: number }> {
  const where: string[] = ['true'];
  const params: unknown[] = [];
  const add = (sql: (n: number) => string, v: unknown) => {
    params.push(v);
    where.push(sql(params.length));
  };
  if (p.tenantId)
    add((n) => `EXISTS (SELECT 1 FROM user_tenants ut WHERE ut.tenant_id = $${n} AND ut.user_id = u.id)`, p.tenantId);
  if (p.email) add((n) => `u.email = $${n}`, p.email.trim().toLowerCase());
  if (p.username) add((n) => `lower(u.username) = lower($${n})`, p.username);
  if (p.phone)
    add(
      (n) => `EXISTS (SELECT 1 FROM user_phone_numbers ph WHERE ph.user_id = u.id AND ph.phone_number = $${n})`,
      p.phone,
    );
  if (p.filter)
    add((n) => `(u.email LIKE $${n} OR lower(u.name) LIKE $${n})`, `%${escapeLike(p.filter.toLowerCase())}%`);
  const whereSql = where.join(' AND ');
  const { rows: c } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM users u WHERE ${whereSql}`, params);
  const { rows } = await q.query<UserRow>(
    `SELECT u.* FROM users u WHERE ${whereSql} ORDER BY ${SORT[p.sortBy]} ${p.order}, u.id ${p.order} LIMIT ${p.limit} OFFSET ${p.page * p.limit}`,
    params,
  );
  return { rows, total: c[0].n };
}
