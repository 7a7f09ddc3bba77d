import type { Queryable } from '../storage/db.ts';

// A job's progress lives in its payload: `processed` (a count) and `cursor` (where a resumed run continues). These
// are the queue's statements for it, so a module reads and writes progress without SQL on the jobs table.

export interface LatestJob {
  /** The payload field's value the job was found by. */
  key: string;
  state: 'pending' | 'running' | 'completed' | 'failed';
  processed: number;
  created_at: Date;
  completed_at: Date | null;
}

/**
 * The newest job of `kind` for each of `values` of the payload field `field`, in one statement. Two index paths:
 * unfinished jobs through `jobs_claim`, finished ones through `jobs_finished (kind, completed_at)`. A value without a
 * row has no job on record (none enqueued, or the finished one has been cleaned up).
 */
export async function latestJobs(
  q: Queryable,
  kind: string,
  field: string,
  values: string[],
): Promise<Map<string, LatestJob>> {
  const out = new Map<string, LatestJob>();
  if (values.length === 0) return out;
  if (!/^\w+$/.test(field)) throw new Error(`payload field ${field}: a name of letters, digits and _`);
  const { rows } = await q.query<LatestJob>(
    `SELECT DISTINCT ON (key) * FROM (
       SELECT payload->>'${field}' AS key, state, coalesce((payload->>'processed')::int, 0) AS processed, created_at, completed_at
       FROM jobs WHERE state IN ('pending', 'running') AND kind = $1 AND payload->>'${field}' = ANY($2::text[])
       UNION ALL
       SELECT payload->>'${field}', state, coalesce((payload->>'processed')::int, 0), created_at, completed_at
       FROM jobs WHERE state IN ('completed', 'failed') AND kind = $1 AND payload->>'${field}' = ANY($2::text[])
     ) j ORDER BY key, created_at DESC`,
    [kind, values],
  );
  for (const r of rows) out.set(r.key, r);
  return out;
}

/** Adds `processed` to the job's count and sets its cursor, in the transaction of the step it describes. */
export async function recordProgress(q: Queryable, jobId: string, processed: number, cursor: unknown): Promise<void> {
  await q.query(
    `UPDATE jobs SET payload = payload || jsonb_build_object('processed', coalesce((payload->>'processed')::int, 0) + $2::int, 'cursor', $3::jsonb) WHERE id = $1`,
    [jobId, processed, JSON.stringify(cursor ?? null)],
  );
}
