import type { Queryable } from '../../storage/db.ts';

/**
 * The applications of a bulk import's accepted users (the users module wrote them): every active default and
 * auto-assign application, for each, in ONE statement. Answers how many such applications exist (none: the chunk
 * fails, interface rule 6), also when no user was accepted.
 */
export async function assignAutoApplications(q: Queryable, users: { id: string; tenantId: string }[]): Promise<number> {
  const { rows } = await q.query<{ apps: number }>(
    `WITH a AS MATERIALIZED (SELECT id FROM applications WHERE is_active AND (is_default OR auto_assign)),
     ins AS (
       INSERT INTO user_applications (app_id, tenant_id, user_id)
       SELECT a.id, x.tenant_id, x.user_id FROM a, unnest($1::uuid[], $2::text[]) AS x(user_id, tenant_id)
     )
     SELECT count(*)::int AS apps FROM a`,
    [users.map((u) => u.id), users.map((u) => u.tenantId)],
  );
  return rows[0].apps;
}
