import type { Queryable } from '../../storage/db.ts';
import { sql, type Sql } from '../../storage/sql.ts';
import type { AuditEntryRow } from './chain.ts';

const COLS = [
  'id',
  'created_at',
  'tenant_id',
  'actor_type',
  'actor_id',
  'action',
  'target_type',
  'target_id',
  'outcome',
  'ip',
  'user_agent',
  'severity',
  'data',
  'hash',
  'prev_hash',
] as const;

/** Locks the chain head for this transaction (serialises appends) and answers it. */
export async function lockHead(
  q: Queryable,
): Promise<{ head_hash: string; anchor_hash: string; anchor_seq: number; removed: number }> {
  return (
    await q.query<{ head_hash: string; anchor_hash: string; anchor_seq: number; removed: number }>(
      'SELECT head_hash, anchor_hash, anchor_seq, removed FROM audit_chain WHERE id = 1 FOR UPDATE',
    )
  ).rows[0];
}

export async function readAnchor(q: Queryable): Promise<{ anchor_hash: string; anchor_seq: number; removed: number }> {
  return (
    await q.query<{ anchor_hash: string; anchor_seq: number; removed: number }>(
      'SELECT anchor_hash, anchor_seq, removed FROM audit_chain WHERE id = 1',
    )
  ).rows[0];
}

export async function setHead(q: Queryable, hash: string): Promise<void> {
  await q.query('UPDATE audit_chain SET head_hash = $1 WHERE id = 1', [hash]);
}

/** Inserts entries in chain order (one statement per 400 rows; seq follows the VALUES order) and moves the head. */
export async function insertEntries(q: Queryable, rows: AuditEntryRow[], head: string): Promise<void> {
  for (let i = 0; i < rows.length; i += 400) {
    const chunk = rows.slice(i, i + 400);
    const params: unknown[] = [];
    const values = chunk.map((r) => {
      const base = params.length;
      for (const c of COLS) params.push(c === 'data' ? JSON.stringify(r.data) : r[c]);
      return `(${COLS.map((_, j) => `$${base + j + 1}`).join(', ')})`;
    });
    const last = i + 400 >= rows.length;
    params.push(head);
    await q.query(
      `WITH ins AS (INSERT INTO audit_log (${COLS.join(', ')}) VALUES ${values.join(', ')} RETURNING 1)
       UPDATE audit_chain SET head_hash = CASE WHEN ${last} THEN $${params.length} ELSE head_hash END WHERE id = 1`,
      params,
    );
  }
}

/** A staged entry: everything but the chain fields, plus the staging sequence (the chain order). */
export type StagedRow = Omit<AuditEntryRow, 'hash' | 'prev_hash' | 'seq'> & { seq?: number | string };

const STAGED = COLS.filter((c) => c !== 'hash' && c !== 'prev_hash');
const STAGE_SQL = `INSERT INTO audit_staging (${STAGED.join(', ')}) VALUES (${STAGED.map((_, i) => `$${i + 1}`).join(', ')})`;

/** One plain INSERT (no lock, no transaction): the entry is durable when it returns. */
export async function stage(q: Queryable, e: StagedRow): Promise<void> {
  await q.query(STAGE_SQL, stageValues(e));
}

/** The staging INSERT's parameter values for an entry, in the order of `stageItem`. */
export const stageValues = (e: StagedRow): unknown[] =>
  STAGED.map((c) => (c === 'data' ? JSON.stringify(e.data) : e[c]));

/**
 * The staging INSERT of `e` as a WITH item `audited` (a storage/sql.ts fragment: a caller's own statement stages the
 * entry). `onlyIf`, the name of an earlier WITH item: the entry is staged only when that item returns a row (e.g. a
 * refresh token rotated by the same statement).
 */
export const stageItem = (e: StagedRow, onlyIf?: string): Sql => {
  const values = sql.list(stageValues(e));
  return sql`audited AS (INSERT INTO audit_staging (${sql.raw(STAGED.join(', '))}) ${
    onlyIf ? sql`SELECT ${values} WHERE EXISTS (SELECT 1 FROM ${sql.raw(onlyIf)})` : sql`VALUES (${values})`
  })`;
};

/**
 * Takes (deletes and answers) the oldest `limit` staged rows, in seq order. Call under the chain-head lock
 * (`lockHead`): that lock, not row locks, gives the one total order across processes.
 */
export async function takeStaged(q: Queryable, limit: number): Promise<StagedRow[]> {
  const { rows } = await q.query<StagedRow>(
    'DELETE FROM audit_staging WHERE seq IN (SELECT seq FROM audit_staging ORDER BY seq LIMIT $1) RETURNING *',
    [limit],
  );
  // RETURNING has no order of its own.
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/** The newest staged seq (0 when nothing is staged): a read chains up to here to see every write answered before it. */
export async function lastStagedSeq(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ seq: number | string | null }>('SELECT max(seq) AS seq FROM audit_staging');
  return Number(rows[0]?.seq ?? 0);
}

export interface AuditFilter {
  tenantId?: string;
  actor?: string;
  action?: string;
  from?: Date;
  to?: Date;
  filter?: string;
  outcome?: string;
  severity?: string;
  /** Any of these accounts / actor ids / emails (the v2 routes' tenant_ids, users, email). */
  tenantIds?: string[];
  actors?: string[];
  emails?: string[];
}

function where(f: AuditFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    parts.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (f.tenantId) add('tenant_id = ?', f.tenantId);
  if (f.actor) add("(actor_id = ? OR actor_type || ':' || coalesce(actor_id, '') = ?)", f.actor);
  if (f.action) {
    if (f.action.endsWith('*')) add('action LIKE ?', `${f.action.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
    else add('action = ?', f.action);
  }
  if (f.tenantIds?.length) add('tenant_id = ANY(?::text[])', f.tenantIds);
  if (f.actors?.length) add('actor_id = ANY(?::text[])', f.actors);
  if (f.emails?.length)
    add(
      `lower(coalesce(data->>'identifier', data->>'email', '')) = ANY(?::text[])`,
      f.emails.map((e) => e.toLowerCase()),
    );
  if (f.from) add('created_at >= ?', f.from);
  if (f.to) add('created_at <= ?', f.to);
  if (f.outcome) add('outcome = ?', f.outcome);
  if (f.severity) add('severity = ?', f.severity);
  if (f.filter) {
    add(
      `(action ILIKE ? OR coalesce(actor_id, '') ILIKE ? OR coalesce(target_id, '') ILIKE ? OR coalesce(ip, '') ILIKE ? OR coalesce(tenant_id, '') ILIKE ?)`,
      `%${f.filter.replace(/[\\%_]/g, '\\$&')}%`,
    );
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export const SORTS: Record<string, string> = {
  createdAt: 'created_at',
  time: 'created_at',
  updatedAt: 'created_at',
  action: 'action',
  actor: 'actor_id',
  tenantId: 'tenant_id',
  severity: 'severity',
  outcome: 'outcome',
  ip: 'ip',
};

export async function query(
  q: Queryable,
  f: AuditFilter,
  o: { sortBy: string; desc: boolean; offset: number; count: number },
) {
  const w = where(f);
  const total = Number(
    (await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log ${w.sql}`, w.params)).rows[0].n,
  );
  const dir = o.desc ? 'DESC' : 'ASC';
  const { rows } = await q.query<AuditEntryRow>(
    `SELECT * FROM audit_log ${w.sql} ORDER BY ${SORTS[o.sortBy] ?? 'created_at'} ${dir}, seq ${dir} LIMIT $${w.params.length + 1} OFFSET $${w.params.length + 2}`,
    [...w.params, o.count, o.offset],
  );
  return { rows, total };
}

/** Entries after `afterSeq` in seq order (export and verify page through with this). */
export async function page(q: Queryable, f: AuditFilter, afterSeq: number, limit: number): Promise<AuditEntryRow[]> {
  const w = where(f);
  const sql = w.sql ? `${w.sql} AND seq > $${w.params.length + 1}` : `WHERE seq > $1`;
  return (
    await q.query<AuditEntryRow>(`SELECT * FROM audit_log ${sql} ORDER BY seq LIMIT $${w.params.length + 2}`, [
      ...w.params,
      afterSeq,
      limit,
    ])
  ).rows;
}

export async function stats(q: Queryable, tenantId: string | undefined) {
  const w = where({ tenantId });
  const { rows } = await q.query<{ total: number; today: number; week: number; failures: number; severe: number }>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE created_at >= date_trunc('day', now()))::int AS today,
            count(*) FILTER (WHERE created_at >= now() - interval '7 days')::int AS week,
            count(*) FILTER (WHERE outcome = 'failure')::int AS failures,
            count(*) FILTER (WHERE severity IN ('High', 'Critical', 'Error') AND created_at >= now() - interval '7 days')::int AS severe
     FROM audit_log ${w.sql}`,
    w.params,
  );
  const bySeverity = (
    await q.query<{ severity: string; n: number }>(
      `SELECT severity, count(*)::int AS n FROM audit_log ${w.sql} GROUP BY severity ORDER BY severity`,
      w.params,
    )
  ).rows;
  const topActions = (
    await q.query<{ action: string; n: number }>(
      `SELECT action, count(*)::int AS n FROM audit_log ${w.sql} GROUP BY action ORDER BY n DESC, action LIMIT 10`,
      w.params,
    )
  ).rows;
  return { ...rows[0], bySeverity, topActions };
}

export async function metrics(q: Queryable, from: Date, to: Date, limit: number, bucketSeconds: number) {
  const params = [from, to];
  const topResources = (
    await q.query<{ key: string; n: number }>(
      `SELECT coalesce(target_type, action) AS key, count(*)::int AS n FROM audit_log WHERE created_at BETWEEN $1 AND $2 GROUP BY 1 ORDER BY n DESC, key LIMIT ${limit}`,
      params,
    )
  ).rows;
  const topTenants = (
    await q.query<{ key: string; n: number }>(
      `SELECT tenant_id AS key, count(*)::int AS n FROM audit_log WHERE created_at BETWEEN $1 AND $2 AND tenant_id IS NOT NULL GROUP BY 1 ORDER BY n DESC, key LIMIT ${limit}`,
      params,
    )
  ).rows;
  const byTime = (
    await q.query<{ bucket: number; n: number }>(
      `SELECT (floor(extract(epoch FROM created_at) / $3) * $3)::bigint AS bucket, count(*)::int AS n FROM audit_log WHERE created_at BETWEEN $1 AND $2 GROUP BY 1 ORDER BY 1`,
      [...params, bucketSeconds],
    )
  ).rows;
  return { topResources, topTenants, byTime };
}

/** Retention: removes entries older than `before` (oldest first, up to `limit`) and records the last removed hash. */
export async function removeOlderThan(q: Queryable, before: Date, limit: number): Promise<number> {
  const { rows } = await q.query<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM audit_log WHERE seq <= (SELECT max(seq) FROM (SELECT seq FROM audit_log WHERE created_at < $1 ORDER BY seq LIMIT $2) s) ORDER BY seq DESC LIMIT 1',
    [before, limit],
  );
  if (!rows[0]) return 0;
  const last = rows[0];
  const del = await q.query('DELETE FROM audit_log WHERE seq <= $1', [last.seq]);
  await q.query('UPDATE audit_chain SET anchor_hash = $1, anchor_seq = $2, removed = removed + $3 WHERE id = 1', [
    last.hash,
    last.seq,
    del.rowCount,
  ]);
  return del.rowCount;
}
