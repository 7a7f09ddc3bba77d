import { newId } from '../../lib/crypto.ts';
import type { Queryable } from '../../storage/db.ts';
import { sql, type Sql } from '../../storage/sql.ts';
import { webhookWantsSql } from '../webhooks/index.ts';
import { EVENT_KEYS, type NewEvent } from './catalog.ts';
import { createBus } from './bus.ts';

export interface EventsOptions {
  /** EVENTS_ENABLED=false makes `emit` a no-op (a benchmark aid; see docs/events.md). */
  enabled?: boolean;
}

const KNOWN = new Set<string>(EVENT_KEYS);

/**
 * A new event's `dispatched_at` (SQL over the row's `key` and `tenant` expressions): NULL, for the webhook dispatcher,
 * when an active webhook would receive it (the webhooks module's rule); otherwise now(), since nothing will ever fan
 * it out: the event needs no later UPDATE and no dispatcher pass. A webhook receives the events emitted while it is
 * active and visible (docs/decisions.md, "Events nobody subscribes to").
 */
export const dispatchedAtSql = (key: string, tenant: string): string =>
  `CASE WHEN ${webhookWantsSql(key, tenant)} THEN NULL ELSE now() END`;

/** INSERT of the rows `rows` (`(…), …` in rowOf's column order), each with its dispatchedAtSql. */
const insertEvents = (rows: Sql) =>
  sql`INSERT INTO events (id, event_key, tenant_id, entity_type, entity_id, data, dispatched_at)
   SELECT v.id::uuid, v.event_key, v.tenant_id, v.entity_type, v.entity_id, v.data::jsonb,
          ${sql.raw(dispatchedAtSql('v.event_key', 'v.tenant_id'))}
     FROM (VALUES ${rows}) AS v (id, event_key, tenant_id, entity_type, entity_id, data)`;

/** An event's row values, in insertEvents's column order (its key checked against the catalogue). */
function rowOf(e: NewEvent): unknown[] {
  if (!KNOWN.has(e.eventKey))
    throw new Error(`unknown event key ${e.eventKey}: add it to src/modules/events/catalog.ts and docs/events.md`);
  return [
    newId(),
    e.eventKey,
    e.tenantId ?? null,
    e.entity?.type ?? null,
    e.entity?.id ?? null,
    JSON.stringify(e.data),
  ];
}

/** Events as a WITH item of a caller's statement: `cte(first)` with `values` numbered from `first`; then `written()`. */
export interface InlineEvents {
  cte: (first: number) => string;
  values: unknown[];
  /** How many events (the text of `cte` depends on it). */
  count: number;
  written: () => void;
}

/** Debounce of the dispatcher's wake-up after emits (delivery latency vs fan-out transactions per second). */
const WAKE_MS = 25;

/**
 * The outbox: `emit` writes the event with the caller's handle, so it commits or rolls back with the change that
 * caused it. Pass the transaction (`tx`) the change is written in. The webhook dispatcher fans committed events out.
 */
export function createEventsService(opts: EventsOptions = {}) {
  const listeners: Array<() => void> = [];
  const observers: Array<(eventKey: string) => void> = [];
  const observe = (list: NewEvent[]) => {
    for (const o of observers) for (const e of list) o(e.eventKey);
  };
  let wakeTimer: NodeJS.Timeout | undefined;
  const api = {
    enabled: opts.enabled !== false,
    /** Domain events in process (bus.ts, domain.ts): subscribers run in the publisher's transaction, never stored. */
    bus: createBus(),
    async emit(q: Queryable, e: NewEvent): Promise<void> {
      return emitMany(q, [e]);
    },
    /** Several events in one statement (bulk paths: migrations), in the given order. */
    emitMany,
    /**
     * One event as a WITH item `emitted` (a storage/sql.ts fragment) of the caller's own statement: a hot path saves
     * the INSERT's round trip. Call `written()` after that statement ran (it nudges the dispatcher). Undefined when
     * events are off. Same row and checks as `emit`.
     */
    inline(e: NewEvent): { item: Sql; written: () => void } | undefined {
      observe([e]);
      if (opts.enabled === false) return undefined;
      return { item: sql`emitted AS (${insertEvents(sql`(${sql.list(rowOf(e))})`)})`, written: nudge };
    },
    /** `inline` for several events (a batch write's WITH item), in the given order; undefined when none or off. */
    inlineMany(list: NewEvent[]): InlineEvents | undefined {
      observe(list);
      if (opts.enabled === false || list.length === 0) return undefined;
      const item = sql`emitted AS (${insertEvents(
        sql.join(
          list.map((e) => sql`(${sql.list(rowOf(e))})`),
          ', ',
        ),
      )})`;
      return {
        cte: (first) => item.build(first).text,
        values: item.build().values,
        count: list.length,
        written: nudge,
      };
    },
    /** Called (debounced) after events were written; the dispatcher uses it to look sooner than its poll. */
    onEmit(listener: () => void): void {
      listeners.push(listener);
    },
    /**
     * Told synchronously of every event a service emits (its key), even with events switched off; the event is
     * written in the caller's transaction, which may still roll back.
     */
    onEvent(observer: (eventKey: string) => void): void {
      observers.push(observer);
    },
  };
  return api;

  async function emitMany(q: Queryable, list: NewEvent[]): Promise<void> {
    observe(list);
    if (opts.enabled === false || list.length === 0) return;
    for (let i = 0; i < list.length; i += 1000) {
      const rows = sql.join(
        list.slice(i, i + 1000).map((e) => sql`(${sql.list(rowOf(e))})`),
        ', ',
      );
      const { text, values } = insertEvents(rows).build();
      await q.query(text, values);
    }
    nudge();
  }

  /**
   * Nudges the dispatcher shortly after (by then the caller's transaction has usually committed; else it polls).
   * One nudge per WAKE_MS however many events: under load one fan-out takes the events of many writes.
   */
  function nudge(): void {
    if (listeners.length && !wakeTimer) {
      wakeTimer = setTimeout(() => {
        wakeTimer = undefined;
        for (const l of listeners) l();
      }, WAKE_MS);
      wakeTimer.unref();
    }
  }
}
export type EventsService = ReturnType<typeof createEventsService>;
