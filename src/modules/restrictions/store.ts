import type { Queryable } from '../../storage/db.ts';
import { GROUP_ROLE_ASSIGNMENTS_SQL } from '../groups/index.ts';
import { ROLE_PERMISSION_KEYS_SQL } from '../roles/index.ts';

/**
 * Subqueries of modules that import this one, given by the composition root: the users module's role assignments
 * (its `userTablesSql.userRoles`) and the auth module's sessions (its SESSIONS_SQL).
 */
export interface SignInTablesSql {
  userRoles: string;
  sessions: string;
}

export type Strategy = 'ALLOW' | 'BLOCK';

export interface IpRuleRow {
  tenant_id: string;
  id: string;
  ip: string;
  description: string;
  strategy: Strategy;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DomainRuleRow {
  scope: string;
  id: string;
  domain: string;
  type: Strategy;
  created_at: Date;
}

// ---- IP restrictions ----

export async function ipConfig(
  q: Queryable,
  tenantId: string,
  lock = false,
): Promise<{ strategy: Strategy; is_active: boolean; updated_at: Date } | undefined> {
  const { rows } = await q.query<{ strategy: Strategy; is_active: boolean; updated_at: Date }>(
    `SELECT strategy, is_active, updated_at FROM ip_restriction_config WHERE tenant_id = $1${lock ? ' FOR UPDATE' : ''}`,
    [tenantId],
  );
  return rows[0];
}

export async function writeIpConfig(
  q: Queryable,
  tenantId: string,
  strategy: Strategy,
  isActive: boolean,
): Promise<void> {
  await q.query(
    `INSERT INTO ip_restriction_config (tenant_id, strategy, is_active) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id) DO UPDATE SET strategy = excluded.strategy, is_active = excluded.is_active, updated_at = now()`,
    [tenantId, strategy, isActive],
  );
}

/** What the sign-in gate enforces, in one statement: the active strategy and its active rules; undefined when off. */
export async function enforced(
  q: Queryable,
  tenantId: string,
): Promise<{ strategy: Strategy; rules: { id: string; ip: string }[] } | undefined> {
  const { rows } = await q.query<{ strategy: Strategy; id: string | null; ip: string | null }>(
    `SELECT c.strategy, r.id, r.ip FROM ip_restriction_config c
     LEFT JOIN ip_restrictions r ON r.tenant_id = c.tenant_id AND r.strategy = c.strategy AND r.is_active
     WHERE c.tenant_id = $1 AND c.is_active`,
    [tenantId],
  );
  if (rows.length === 0) return undefined;
  return {
    strategy: rows[0].strategy,
    rules: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, ip: r.ip! })),
  };
}

export async function activeRules(
  q: Queryable,
  tenantId: string,
  strategy: Strategy,
): Promise<{ id: string; ip: string }[]> {
  const { rows } = await q.query<{ id: string; ip: string }>(
    'SELECT id, ip FROM ip_restrictions WHERE tenant_id = $1 AND strategy = $2 AND is_active',
    [tenantId, strategy],
  );
  return rows;
}

export async function insertIpRule(
  q: Queryable,
  r: Pick<IpRuleRow, 'tenant_id' | 'id' | 'ip' | 'description' | 'strategy' | 'is_active'>,
): Promise<IpRuleRow> {
  const { rows } = await q.query<IpRuleRow>(
    `INSERT INTO ip_restrictions (tenant_id, id, ip, description, strategy, is_active) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [r.tenant_id, r.id, r.ip, r.description, r.strategy, r.is_active],
  );
  return rows[0];
}

export async function findIpRule(q: Queryable, tenantId: string, id: string): Promise<IpRuleRow | undefined> {
  const { rows } = await q.query<IpRuleRow>('SELECT * FROM ip_restrictions WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    id,
  ]);
  return rows[0];
}

export async function deleteIpRule(q: Queryable, tenantId: string, id: string): Promise<void> {
  await q.query('DELETE FROM ip_restrictions WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listIpRules(
  q: Queryable,
  tenantId: string,
  p: { limit: number; page: number; filter?: string },
): Promise<{ rows: IpRuleRow[]; total: number }> {
  const params: unknown[] = [tenantId];
  let where = 'tenant_id = $1';
  if (p.filter) {
    params.push(`%${escapeLike(p.filter.toLowerCase())}%`);
    where += ` AND (ip LIKE $2 OR lower(description) LIKE $2)`;
  }
  const { rows } = await q.query<IpRuleRow>(
    `SELECT * FROM ip_restrictions WHERE ${where} ORDER BY created_at, id LIMIT ${p.limit} OFFSET ${p.page * p.limit}`,
    params,
  );
  const { rows: c } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ip_restrictions WHERE ${where}`,
    params,
  );
  return { rows, total: c[0].n };
}

/**
 * The addresses the account's administrators (holders of `permission` through their roles or their groups' roles)
 * signed in from during the last 30 days, with the permission keys that make them administrators. `tables`: the
 * subqueries of the modules owning the tables (see SignInTablesSql).
 */
export async function adminSignInAddresses(
  q: Queryable,
  tables: SignInTablesSql,
  tenantId: string,
): Promise<{ ip: string; key: string }[]> {
  const { rows } = await q.query<{ ip: string; key: string }>(
    `SELECT DISTINCT s.ip, rp.key FROM (${tables.sessions}) s
     JOIN (SELECT user_id, role_id FROM (${tables.userRoles}) a WHERE tenant_id = $1
           UNION SELECT user_id, role_id FROM (${GROUP_ROLE_ASSIGNMENTS_SQL}) g WHERE tenant_id = $1) ur
       ON ur.user_id = s.user_id
     JOIN (${ROLE_PERMISSION_KEYS_SQL}) rp ON rp.role_id = ur.role_id
     WHERE s.tenant_id = $1 AND s.ip IS NOT NULL AND s.created_at > now() - interval '30 days'`,
    [tenantId],
  );
  return rows;
}

export async function forgetAccount(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM ip_restrictions WHERE tenant_id = $1', [tenantId]);
  await q.query('DELETE FROM ip_restriction_config WHERE tenant_id = $1', [tenantId]);
  await q.query('DELETE FROM domain_restrictions WHERE scope = $1', [tenantId]);
  await q.query('DELETE FROM domain_restriction_config WHERE scope = $1', [tenantId]);
}

// ---- email-domain restrictions (scope '' = the environment) ----

export interface DomainConfigRow {
  active: boolean;
  list_type: Strategy;
  block_public_domains: boolean;
}

export async function domainConfig(q: Queryable, scope: string, lock = false): Promise<DomainConfigRow | undefined> {
  const { rows } = await q.query<DomainConfigRow>(
    `SELECT active, list_type, block_public_domains FROM domain_restriction_config WHERE scope = $1${lock ? ' FOR UPDATE' : ''}`,
    [scope],
  );
  return rows[0];
}

export async function writeDomainConfig(q: Queryable, scope: string, c: DomainConfigRow): Promise<void> {
  await q.query(
    `INSERT INTO domain_restriction_config (scope, active, list_type, block_public_domains) VALUES ($1, $2, $3, $4)
     ON CONFLICT (scope) DO UPDATE SET active = excluded.active, list_type = excluded.list_type,
       block_public_domains = excluded.block_public_domains, updated_at = now()`,
    [scope, c.active, c.list_type, c.block_public_domains],
  );
}

export async function insertDomains(
  q: Queryable,
  scope: string,
  type: Strategy,
  domains: { id: string; domain: string }[],
): Promise<DomainRuleRow[]> {
  if (!domains.length) return [];
  const { rows } = await q.query<DomainRuleRow>(
    `INSERT INTO domain_restrictions (scope, id, domain, type)
     SELECT $1, d.id, d.domain, $2 FROM unnest($3::uuid[], $4::text[]) AS d(id, domain) RETURNING *`,
    [scope, type, domains.map((d) => d.id), domains.map((d) => d.domain)],
  );
  return rows.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
}

export async function findDomain(q: Queryable, scope: string, id: string): Promise<DomainRuleRow | undefined> {
  const { rows } = await q.query<DomainRuleRow>('SELECT * FROM domain_restrictions WHERE scope = $1 AND id = $2', [
    scope,
    id,
  ]);
  return rows[0];
}

export async function deleteDomain(q: Queryable, scope: string, id: string): Promise<void> {
  await q.query('DELETE FROM domain_restrictions WHERE scope = $1 AND id = $2', [scope, id]);
}

export async function deleteDomainsOfType(q: Queryable, scope: string, type: Strategy): Promise<void> {
  await q.query('DELETE FROM domain_restrictions WHERE scope = $1 AND type = $2', [scope, type]);
}

export async function countDomains(q: Queryable, scope: string, type: Strategy): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM domain_restrictions WHERE scope = $1 AND type = $2',
    [scope, type],
  );
  return rows[0].n;
}

export async function listDomains(
  q: Queryable,
  scope: string,
  p: { limit: number; page: number },
): Promise<{ rows: DomainRuleRow[]; total: number }> {
  const { rows } = await q.query<DomainRuleRow>(
    `SELECT * FROM domain_restrictions WHERE scope = $1 ORDER BY type, domain, id LIMIT ${p.limit} OFFSET ${p.page * p.limit}`,
    [scope],
  );
  const { rows: c } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM domain_restrictions WHERE scope = $1',
    [scope],
  );
  return { rows, total: c[0].n };
}

/**
 * The active configurations of the scopes with, for each, whether one of `suffixes` (the email's domain and its
 * parent domains) is on the list its type enforces. One statement.
 */
export async function domainVerdicts(
  q: Queryable,
  scopes: string[],
  suffixes: string[],
): Promise<(DomainConfigRow & { scope: string; listed: boolean })[]> {
  const { rows } = await q.query<DomainConfigRow & { scope: string; listed: boolean }>(
    `SELECT c.scope, c.active, c.list_type, c.block_public_domains,
       EXISTS (SELECT 1 FROM domain_restrictions r WHERE r.scope = c.scope AND r.type = c.list_type AND r.domain = ANY($2::text[])) AS listed
     FROM domain_restriction_config c WHERE c.active AND c.scope = ANY($1::text[])`,
    [scopes, suffixes],
  );
  return rows;
}
