import { AsyncResource } from 'node:async_hooks';
import type { Db, Queryable } from './db.ts';

/** The one channel every instance LISTENs on; the payload names the topic (and key) whose cached copies are stale. */
export const INVALIDATE_CHANNEL = 'gatehouse_invalidate';

/** Drops the cached copies of `key` (undefined: every key of the topic). Runs on every instance, the writer's too. */
export type InvalidationHandler = (key: string | undefined) => void;

export interface Invalidation {
  /**
   * NOTIFYs every instance that `topic` (`key`, or all of it) changed. Call it with the writer's transaction: the
   * notification leaves at commit and never for a rolled-back write. Outside a transaction, call it after the write.
   */
  publish(q: Queryable, topic: string, key?: string): Promise<void>;
  /** Runs `handler` for each notification of `topic`, and with no key when the listener reconnects (missed ones). */
  subscribe(topic: string, handler: InvalidationHandler): void;
  /** Whether notifications arrive now. While false, the caches' time-to-live is what bounds staleness. */
  readonly connected: boolean;
  /** The listening backend's pid (PostgreSQL), for operators and tests. */
  readonly listenerPid: number | undefined;
  /** Notifications received so far (this instance's own included). */
  readonly received: number;
  /** Starts listening (once; the first connection attempt is awaited). */
  start(): Promise<void>;
  close(): Promise<void>;
}

interface Message {
  t: string;
  k?: string;
}

/**
 * Cross-instance invalidation through PostgreSQL LISTEN/NOTIFY (PGlite: its in-process listen). Each cache keeps its
 * time-to-live as today, so a notification lost while the listener is down costs at most that TTL; on reconnect
 * every topic is dropped whole, since notifications sent meanwhile were missed.
 */
export function createInvalidation(db: Db, log?: { warn(o: object, msg: string): void }): Invalidation {
  const handlers = new Map<string, InvalidationHandler[]>();
  let connected = false;
  let everConnected = false;
  let listenerPid: number | undefined;
  let received = 0;
  let stop: (() => Promise<void>) | undefined;

  const run = (topic: string, key: string | undefined) => {
    for (const h of handlers.get(topic) ?? []) {
      try {
        h(key);
      } catch (err) {
        log?.warn({ err, topic }, 'cache invalidation handler failed');
      }
    }
  };

  // Handlers run in the context this was built in, never the writer's: PGlite delivers while the COMMIT is processed,
  // and a handler that reloads (the keys) must not look like a statement inside that transaction.
  const onMessage = AsyncResource.bind((payload: string) => {
    let m: Message;
    try {
      m = JSON.parse(payload) as Message;
    } catch {
      return;
    }
    if (typeof m?.t !== 'string') return;
    received++;
    run(m.t, typeof m.k === 'string' ? m.k : undefined);
  });

  return {
    async publish(q, topic, key) {
      const m: Message = key === undefined ? { t: topic } : { t: topic, k: key };
      await q.query('SELECT pg_notify($1, $2)', [INVALIDATE_CHANNEL, JSON.stringify(m)]);
    },
    subscribe(topic, handler) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    get connected() {
      return connected;
    },
    get listenerPid() {
      return listenerPid;
    },
    get received() {
      return received;
    },
    async start() {
      if (stop || !db.listen) return;
      stop = await db.listen(INVALIDATE_CHANNEL, onMessage, (state) => {
        const wasDown = !connected;
        connected = state.connected;
        listenerPid = state.pid;
        if (!state.connected) log?.warn({}, 'invalidation listener down: caches fall back to their time-to-live');
        else if (wasDown && everConnected) for (const topic of handlers.keys()) run(topic, undefined);
        if (state.connected) everConnected = true;
      });
    },
    async close() {
      const s = stop;
      stop = undefined;
      connected = false;
      await s?.();
    },
  };
}
