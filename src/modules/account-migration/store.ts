import type { Queryable } from '../../storage/db.ts';
import type { MigrationState } from './schema.ts';

/**
 * SQL for the `migrations` table, shared by every migration kind: the request items, the cursor (items handled so
 * far) and the outcome. Nothing here knows what an item means; callers give the item property that identifies one.
 */
export type MigrationKind = 'tenants' | 'users';

/** One rejected item as stored in `errors`: `{index, <key>, code, message}` (key `id` or `email`). */
export type StoredItemError = { index: number; code: string; message: string } & Record<string, unknown>;

export interface MigrationRow {
  id: string;
  kind: MigrationKind;
  state: MigrationState;
  total: number;
  cursor: number;
  succeeded: number;
  failed: number;
  errors: StoredItemError[];
  failure: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/** Every column but `items` (which can be large). */
const COLUMNS =
  'id, kind, state, total, cursor, succeeded, failed, errors, failure, created_at, started_at, completed_at';

export async function insertMigration(
  q: Queryable,
  m: { id: string; kind: MigrationKind; items: unknown[] },
): Promise<void> {
  await q.query('INSERT INTO migrations (id, kind, items, total) VALUES ($1, $2, $3::jsonb, $4)', [
    m.id,
    m.kind,
    JSON.stringify(m.items),
    m.items.length,
  ]);
}

export async function findMigration(q: Queryable, id: string, kind: MigrationKind): Promise<MigrationRow | undefined> {
  const { rows } = await q.query<MigrationRow>(`SELECT ${COLUMNS} FROM migrations WHERE id = $1 AND kind = $2`, [
    id,
    kind,
  ]);
  return rows[0];
}

/** Locks the row for one step of the job (held until the step's transaction ends). */
export async function lockMigration(q: Queryable, id: string): Promise<MigrationRow | undefined> {
  const { rows } = await q.query<MigrationRow>(`SELECT ${COLUMNS} FROM migrations WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0];
}

/** items[from .. from+count), in order. */
/** Items [from, from + count) of a migration, read with one pass over the stored list (a jsonpath slice). */
export async function itemSlice(q: Queryable, id: string, from: number, count: number): Promise<unknown[]> {
  if (count <= 0) return [];
  const { rows } = await q.query<{ items: unknown[] | null }>(
    `SELECT CASE WHEN $2::int >= total THEN '[]'::jsonb
                 ELSE jsonb_path_query_array(items, format('$[%s to %s]', $2::int, least($2::int + $3::int, total) - 1)::jsonpath) END AS items
     FROM migrations WHERE id = $1`,
    [id, from, count],
  );
  return rows[0]?.items ?? [];
}

/**
 * Which of `keys` some item before position `before` already carries. An item's key is the item itself when it is a
 * string, else its `keyField` property when that is a string.
 */
export async function keysBefore(
  q: Queryable,
  id: string,
  before: number,
  keyField: string,
  keys: string[],
): Promise<Set<string>> {
  if (before <= 0 || keys.length === 0) return new Set();
  const { rows } = await q.query<{ k: string }>(
    `SELECT DISTINCT k FROM (
       SELECT CASE jsonb_typeof(x.e)
                WHEN 'string' THEN x.e #>> '{}'
                WHEN 'object' THEN CASE WHEN jsonb_typeof(x.e -> $3::text) = 'string' THEN x.e ->> $3::text END
              END AS k
       FROM migrations m, jsonb_array_elements(m.items) WITH ORDINALITY AS x(e, n)
       WHERE m.id = $1 AND x.n <= $2::int
     ) s
     WHERE k = ANY($4::text[])`,
    [id, before, keyField, keys],
  );
  return new Set(rows.map((r) => r.k));
}

/** Commits one step: moves the cursor, adds the counts and errors; the first step sets `running`, the last `completed`. */
export async function recordStep(
  q: Queryable,
  id: string,
  step: { cursor: number; succeeded: number; failed: number; errors: StoredItemError[]; done: boolean },
): Promise<void> {
  await q.query(
    `UPDATE migrations SET cursor = $2, succeeded = succeeded + $3, failed = failed + $4, errors = errors || $5::jsonb,
            state = CASE WHEN $6::boolean THEN 'completed' ELSE 'running' END,
            started_at = coalesce(started_at, now()),
            completed_at = CASE WHEN $6::boolean THEN now() END
     WHERE id = $1`,
    [id, step.cursor, step.succeeded, step.failed, JSON.stringify(step.errors), step.done],
  );
}

/** A migration whose job failed for good; one that has already finished stays as it is. */
export async function markFailed(q: Queryable, id: string, reason: string): Promise<void> {
  await q.query(
    `UPDATE migrations SET state = 'failed', failure = $2, completed_at = now() WHERE id = $1 AND state IN ('pending', 'running')`,
    [id, reason],
  );
}
