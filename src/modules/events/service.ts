import { newId } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';
import type { NewEvent } from './catalog.ts';

/**
 * The outbox: `emit` writes the event with the caller's handle, so it commits or rolls back with the change that
 * caused it. Pass the transaction (`tx`) the change is written in.
 */
export function createEventsService() {
  return {
    async emit(q: Queryable, e: NewEvent): Promise<void> {
      await q.query(
        'INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data) VALUES ($1, $2, $3, $4, $5, $6)',
        [newId(), e.eventKey, e.tenantId ?? null, e.entity?.type ?? null, e.entity?.id ?? null, JSON.stringify(e.data)],
      );
    },
  };
}
export type EventsService = ReturnType<typeof createEventsService>;
