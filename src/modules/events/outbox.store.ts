import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { deliveryPendingSql, type FeedEvent } from '../webhooks/index.ts';

// The outbox's statements for the webhook dispatcher (fan-out) and retention.

const ANY_UNDISPATCHED = prepared('SELECT EXISTS (SELECT 1 FROM events WHERE dispatched_at IS NULL) AS any');
/** Whether any event waits for the fan-out (the partial index events_undispatched answers it). */
export async function anyUndispatched(q: Queryable): Promise<boolean> {
  return (await q.query<{ any: boolean }>(ANY_UNDISPATCHED)).rows[0].any;
}

/**
 * Takes up to `limit` undispatched events in seq order and marks them dispatched, in one statement (the caller holds
 * the fan-out lock and writes their deliveries in the same transaction). Answers them in seq order.
 */
export async function takeUndispatched(q: Queryable, limit: number): Promise<FeedEvent[]> {
  const { rows } = await q.query<FeedEvent>(
    `UPDATE events SET dispatched_at = now() WHERE seq IN (SELECT seq FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT $1)
     RETURNING seq, id, event_key, tenant_id, entity_type, entity_id, data, created_at`,
    [limit],
  );
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/**
 * Retention, one bounded batch: outbox rows created before `before` that were fanned out and have no delivery still
 * to send (an event whose delivery is pending or being sent stays until that delivery finishes or gives up).
 */
export async function removeOldEvents(q: Queryable, before: Date, limit: number): Promise<number> {
  return (
    await q.query(
      `DELETE FROM events WHERE seq IN (
       SELECT e.seq FROM events e
       WHERE e.created_at < $1 AND e.dispatched_at IS NOT NULL
         AND NOT ${deliveryPendingSql('e.id')}
       ORDER BY e.seq LIMIT $2)`,
      [before, limit],
    )
  ).rowCount;
}
