import type { Queryable } from '../../storage/db.ts';

/**
 * The ids of the roles with a key among `keys` that the account may hold (environment roles and its own), in id
 * order: an identity provider's role names mapped by key (user migration).
 */
export async function roleIdsByKeys(q: Queryable, tenantId: string, keys: string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    'SELECT id::text FROM roles WHERE key = ANY($2::text[]) AND (tenant_id IS NULL OR tenant_id = $1) ORDER BY id',
    [tenantId, keys],
  );
  return rows.map((r) => r.id);
}
