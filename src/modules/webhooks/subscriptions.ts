import type { Queryable } from '../../storage/db.ts';

// What the webhooks module offers the events outbox (events imports this module, so webhooks imports nothing of
// events): SQL over the webhook tables for the outbox's statements, and the outbox statements the dispatcher needs,
// as an interface the composition root fills with the events module's `eventFeed`.

/**
 * Whether an active webhook would receive an event (SQL over the event's `key` and `tenant` expressions): the
 * fan-out's own rule, the webhook's account or none, the key or `*`.
 */
export const webhookWantsSql = (key: string, tenant: string): string =>
  `EXISTS (SELECT 1 FROM webhooks w WHERE w.is_active AND (w.tenant_id IS NULL OR w.tenant_id = ${tenant})
                       AND (${key} = ANY (w.event_keys) OR '*' = ANY (w.event_keys)))`;

/** Whether the event `eventId` (an id expression) has a delivery still to send (pending or being sent, in time). */
export const deliveryPendingSql = (eventId: string): string =>
  `EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ${eventId} AND d.status IN ('pending', 'delivering') AND d.give_up_at >= now())`;

export interface FeedEvent {
  seq: number;
  id: string;
  event_key: string;
  tenant_id: string | null;
  entity_type: string | null;
  entity_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** The outbox as the dispatcher and retention use it (the events module's `eventFeed`). */
export interface EventFeed {
  /** The event catalogue: the keys an endpoint may subscribe to (besides `*`). */
  keys: readonly string[];
  /** Whether any event waits for the fan-out. */
  anyUndispatched(q: Queryable): Promise<boolean>;
  /** Takes up to `limit` undispatched events in seq order and marks them dispatched, in one statement. */
  takeUndispatched(q: Queryable, limit: number): Promise<FeedEvent[]>;
  /** Retention, one bounded batch of fanned-out events created before `before` with nothing left to send. */
  removeOld(q: Queryable, before: Date, limit: number): Promise<number>;
}
