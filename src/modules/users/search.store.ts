import type { Queryable } from '../../storage/db.ts';
import type { UserRow } from './store.ts';
import { accountTablesSql } from '../tenants/index.ts';

/** The searched text of a user: the expression of the trigram index users_search_trgm (migration 0041), verbatim. */
const TEXT = "(lower(u.name) || ' ' || coalesce(u.email, '') || ' ' || coalesce(lower(u.username), ''))";
/** How alike a phrase and a word of the text must be to match without being a substring (pg_trgm word similarity). */
const WORD_SIMILARITY = '0.4';

export interface UserSearchParams {
  limit: number;
  page: number;
  /** Lower-cased phrase: a substring of, or a word like one in, name, email or username. */
  phrase?: string;
  /** Members of any of these accounts. */
  tenantIds?: string[];
  email?: string;
  username?: string;
  phone?: string;
  namePrefix?: string;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The schema of the pg_trgm extension (one per database), to name its operator and function whatever the search_path. */
async function schemaOfTrgm(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ nspname: string }>(
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'",
  );
  if (!rows[0]) throw new Error('pg_trgm is not installed (migration 0025 creates it)');
  return quoteIdent(rows[0].nspname);
}

/** An account and, with `subAccounts`, every live account below it. */
export async function accountAndBelow(q: Queryable, tenantId: string, subAccounts: boolean): Promise<string[]> {
  if (!subAccounts) return [tenantId];
  const { rows } = await q.query<{ tenant_id: string }>(
    `WITH RECURSIVE down AS (
       SELECT tenant_id, 0 AS d FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1 AND deleted_at IS NULL
       UNION ALL
       SELECT t.tenant_id, down.d + 1
         FROM (${accountTablesSql.accounts}) t JOIN down ON t.parent_tenant_id = down.tenant_id
       WHERE t.deleted_at IS NULL AND down.d < 1000)
     SELECT tenant_id FROM down`,
    [tenantId],
  );
  return rows.length ? rows.map((r) => r.tenant_id) : [tenantId];
}

/**
 * Users matching a phrase, best first: substring matches (those starting with the phrase first), then users with a
 * word like the phrase (pg_trgm word similarity ≥ 0.4, so "jonh" finds "john"), by similarity; ties by email, id.
 * Call it in a transaction: the similarity threshold of the index operator is set for that transaction only.
 */
export async function searchUsers(q: Queryable, p: UserSearchParams): Promise<UserRow[]> {
  const where: string[] = ['true'];
  const params: unknown[] = [];
  const arg = (v: unknown) => `$${params.push(v)}`;
  if (p.tenantIds)
    where.push(
      `EXISTS (SELECT 1 FROM user_tenants ut WHERE ut.user_id = u.id AND ut.tenant_id = ANY(${arg(p.tenantIds)}::text[]))`,
    );
  if (p.email) where.push(`u.email = ${arg(p.email.trim().toLowerCase())}`);
  if (p.username) where.push(`lower(u.username) = lower(${arg(p.username)})`);
  if (p.phone)
    where.push(
      `EXISTS (SELECT 1 FROM user_phone_numbers ph WHERE ph.user_id = u.id AND ph.phone_number = ${arg(p.phone)})`,
    );
  if (p.namePrefix) where.push(`lower(u.name) LIKE ${arg(`${escapeLike(p.namePrefix.toLowerCase())}%`)}`);
  let order = 'u.created_at, u.id';
  if (p.phrase) {
    const schema = await schemaOfTrgm(q);
    const contains = arg(`%${escapeLike(p.phrase)}%`);
    const starts = arg(`${escapeLike(p.phrase)}%`);
    const phrase = arg(p.phrase);
    // Below three characters there is no trigram to compare: substrings only.
    const alike = p.phrase.length >= 3 ? ` OR ${phrase} OPERATOR(${schema}.<%) ${TEXT}` : '';
    where.push(`(${TEXT} LIKE ${contains}${alike})`);
    order = `(${TEXT} LIKE ${contains}) DESC, (lower(u.name) LIKE ${starts} OR u.email LIKE ${starts} OR lower(u.username) LIKE ${starts}) DESC,
             ${schema}.word_similarity(${phrase}, ${TEXT}) DESC, u.email, u.id`;
    await q.query(`SELECT set_config('pg_trgm.word_similarity_threshold', '${WORD_SIMILARITY}', true)`);
  }
  const { rows } = await q.query<UserRow>(
    `SELECT u.* FROM users u WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${p.limit} OFFSET ${p.page * p.limit}`,
    params,
  );
  return rows;
}
