import { sql, type Sql } from '../../storage/sql.ts';
import type { EventKey } from './catalog.ts';
import { dispatchedAtSql } from './service.ts';

const WORD = /^[a-z_][a-z0-9_.]*$/;

/**
 * One event per row of the caller's earlier WITH item `from`, as the WITH item `name` of the caller's statement (e.g.
 * a revocation's session.revoked events, written by the statement that revokes). `tenant` and `entityId` are SQL over
 * `from`'s columns, `tenant` qualified by `from` (the subscriber check's subquery has a `tenant_id` of its own),
 * `data` a fragment answering jsonb. The key and entity type are constants of the text, so the subscriber check
 * (dispatchedAtSql) is planned with the key known.
 */
export function eventsFromRowsItem(e: {
  name: string;
  from: string;
  eventKey: EventKey;
  entityType: string;
  tenant: string;
  entityId: string;
  data: Sql;
}): Sql {
  for (const word of [e.name, e.from, e.eventKey, e.entityType])
    if (!WORD.test(word)) throw new Error(`eventsFromRowsItem: ${word} is not a plain name`);
  const key = `'${e.eventKey}'`;
  const [tenant, type, entityId] = [sql.raw(e.tenant), sql.raw(`'${e.entityType}'`), sql.raw(e.entityId)];
  return sql`${sql.raw(e.name)} AS (
            INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data, dispatched_at)
            SELECT gen_random_uuid(), ${sql.raw(key)}, ${tenant}, ${type}, ${entityId}, ${e.data},
                   ${sql.raw(dispatchedAtSql(key, e.tenant))}
              FROM ${sql.raw(e.from)})`;
}
