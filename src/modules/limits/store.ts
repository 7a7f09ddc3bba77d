import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';

export interface CounterRow {
  key: string;
  count: number;
  window_end: Date;
}

/**
 * One statement: counts one more for each of `$1` (keys, sorted so concurrent statements lock rows in one order)
 * in its window of `$2` seconds, starting a new window when the old one ended, and reads the live counters of `$3`.
 */
const COUNT_AND_READ = prepared(
  `WITH hit AS (
     INSERT INTO rate_limit_counters AS c (key, window_end, count)
     SELECT k, now() + make_interval(secs => w), 1 FROM unnest($1::text[], $2::int[]) AS t(k, w)
     ON CONFLICT (key) DO UPDATE
        SET count = CASE WHEN c.window_end <= now() THEN 1 ELSE c.count + 1 END,
            window_end = CASE WHEN c.window_end <= now() THEN excluded.window_end ELSE c.window_end END
     RETURNING c.key, c.count, c.window_end)
   SELECT key, count, window_end FROM hit
   UNION ALL
   SELECT key, count, window_end FROM rate_limit_counters WHERE key = ANY($3::text[]) AND window_end > now()`,
);

export async function countAndRead(
  q: Queryable,
  count: { key: string; windowSeconds: number }[],
  read: string[],
): Promise<CounterRow[]> {
  const sorted = [...count].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const { rows } = await q.query<CounterRow>(COUNT_AND_READ, [
    sorted.map((c) => c.key),
    sorted.map((c) => c.windowSeconds),
    read,
  ]);
  return rows;
}
