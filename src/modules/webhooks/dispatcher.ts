import type { Logger } from 'pino';
import { decrypt, newId } from '../../lib/crypto.ts';
import type { Db } from '../../storage/db.ts';
import { send } from './deliver.ts';
import * as store from './store.ts';
import type { EventFeed } from './subscriptions.ts';

export interface DispatcherOptions {
  db: Db;
  /** The events outbox (the events module's eventFeed). */
  feed: EventFeed;
  kek: Buffer;
  log: Logger;
  pollMs: number;
  timeoutMs: number;
  retryForSeconds: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Deliveries in flight at once; one endpoint may hold at most half of them, so a dead one cannot starve the rest. */
  concurrency: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: false refuses private addresses at connection time (ssrf.ts). */
  allowPrivateNetworks?: boolean;
}

const FAN_OUT_BATCH = 500;

/** The delivery body of wire.md section 10; built once at fan-out and stored, so a retry or replay sends the same bytes. */
export function deliveryBody(e: {
  id: string;
  event_key: string;
  created_at: Date;
  tenant_id: string | null;
  data: unknown;
}): string {
  return JSON.stringify({
    id: e.id,
    eventKey: e.event_key,
    createdAt: e.created_at.toISOString(),
    tenantId: e.tenant_id,
    data: e.data,
  });
}

/** Exponential backoff from the base, capped, with ±20% jitter. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  const raw = Math.min(baseMs * 2 ** Math.max(attempts - 1, 0), maxMs);
  return Math.round(raw * (0.8 + Math.random() * 0.4));
}

/**
 * The webhook dispatcher: a background loop (started and stopped with the job runner) that
 * 1. fans committed, not yet dispatched events out to the matching active endpoints as delivery rows (one short
 *    transaction under the fan-out lock; the event is marked dispatched in it; an event no active endpoint wanted
 *    when it was written is written dispatched and never reaches this), and
 * 2. claims due deliveries (FOR UPDATE SKIP LOCKED, a lease; only the head of each endpoint+entity queue) and sends
 *    them with a timeout, outside any transaction, many at once; records the outcome and schedules retries.
 * A crash loses nothing: undispatched events stay undispatched, a claimed delivery is claimed again after its lease.
 */
export function createDispatcher(opts: DispatcherOptions) {
  const { db } = opts;
  const leaseSeconds = Math.ceil(opts.timeoutMs / 1000) + 30;
  const perEndpoint = Math.max(1, Math.ceil(opts.concurrency / 2));
  const inflight = new Map<string, { webhookId: string; done: Promise<void> }>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let pendingWake = false;
  // Fan-out runs when events may be waiting: after an emit, on the idle poll, at start, after a full batch. A pass
  // woken by a finished delivery only claims (saves a transaction per delivery).
  let needFanOut = true;
  // Claiming runs when deliveries may be due: after a fan-out wrote some, a finished delivery, a replay, the idle
  // poll (retries come due with time). A pass woken by events that matched no webhook claims nothing.
  let needClaim = true;

  function nudge(): void {
    needClaim = true;
    pendingWake = true;
    wake?.();
  }
  function eventsEmitted(): void {
    needFanOut = true;
    pendingWake = true;
    wake?.();
  }

  /** Writes delivery rows for up to one batch of undispatched events; answers how many events it took. */
  async function fanOut(): Promise<number> {
    // Events no active webhook wants are written already dispatched (events module, dispatchedAtSql): most passes
    // find nothing, and they find it with one read instead of a transaction under the fan-out lock.
    if (!(await opts.feed.anyUndispatched(db))) return 0;
    return db.transaction(async (tx) => {
      await store.lockFanOut(tx);
      // Taken and marked dispatched in one statement; with no active webhook that is the whole fan-out.
      const events = await opts.feed.takeUndispatched(tx, FAN_OUT_BATCH);
      if (events.length === 0) return 0;
      const hooks = await store.activeWebhooks(tx);
      const rows: store.NewDelivery[] = [];
      for (const e of events) {
        let body: string | undefined;
        for (const h of hooks) {
          if (h.tenant_id !== null && h.tenant_id !== e.tenant_id) continue;
          // An endpoint receives the events that happened after it was created (not older ones fanned out late).
          if (e.created_at < h.created_at) continue;
          if (!h.event_keys.includes(e.event_key) && !h.event_keys.includes('*')) continue;
          body ??= deliveryBody(e);
          rows.push({
            id: newId(),
            webhook_id: h.id,
            tenant_id: e.tenant_id,
            event_id: e.id,
            event_key: e.event_key,
            entity_key: e.entity_type && e.entity_id ? `${e.entity_type}:${e.entity_id}` : `event:${e.id}`,
            body,
            give_up_seconds: opts.retryForSeconds,
          });
        }
      }
      await store.insertDeliveries(tx, rows);
      if (rows.length > 0) needClaim = true;
      return events.length;
    });
  }

  async function attempt(d: store.ClaimedDelivery): Promise<void> {
    let result: { ok: boolean; status: number | null; body: string | null; error: string | null };
    if (!d.is_active) result = { ok: false, status: null, body: null, error: 'the webhook is inactive' };
    else
      result = await send(
        d.url,
        decrypt(opts.kek, d.secret_sealed),
        d.event_id,
        d.body,
        opts.timeoutMs,
        opts.allowPrivateNetworks !== false,
      );
    const retryInMs = backoffMs(d.attempts, opts.backoffBaseMs, opts.backoffMaxMs);
    const final = !result.ok && (!d.is_active || Date.now() + retryInMs > d.give_up_at.getTime());
    await store.finishDelivery(db, d.id, { ...result, final, retryInMs });
  }

  function launch(d: store.ClaimedDelivery): void {
    const done = attempt(d)
      .catch((err) =>
        opts.log.error(
          { err: String(err), deliveryId: d.id },
          'webhook delivery bookkeeping failed (retried after the lease)',
        ),
      )
      .finally(() => {
        inflight.delete(d.id);
        nudge();
      });
    inflight.set(d.id, { webhookId: d.webhook_id, done });
  }

  /** One pass: fan out, then claim what the free slots allow. Answers whether there may be more work right away. */
  async function pass(): Promise<boolean> {
    let more = false;
    if (needFanOut) {
      needFanOut = false;
      more = (await fanOut()) === FAN_OUT_BATCH;
      if (more) needFanOut = true;
    }
    const free = opts.concurrency - inflight.size;
    if (free > 0 && needClaim) {
      needClaim = false;
      const perHook = new Map<string, number>();
      for (const f of inflight.values()) perHook.set(f.webhookId, (perHook.get(f.webhookId) ?? 0) + 1);
      const full = [...perHook].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
      const claimed = await store.claimDeliveries(db, free, leaseSeconds, full);
      for (const d of claimed) launch(d);
      if (claimed.length === free) more = needClaim = true;
    }
    return more;
  }

  async function runLoop(): Promise<void> {
    while (running) {
      pendingWake = false;
      let more = false;
      try {
        more = await pass();
      } catch (err) {
        if (!running) break;
        opts.log.error({ err: String(err) }, 'webhook dispatch pass failed');
      }
      if (more || pendingWake) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          needFanOut = true;
          needClaim = true;
          resolve();
        }, opts.pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
    await Promise.allSettled([...inflight.values()].map((f) => f.done));
  }

  return {
    /** Looks for deliveries to send now (a replay was queued). */
    notify: nudge,
    /** Events were emitted: fan out and send now. */
    eventsEmitted,
    start(): void {
      if (running) return;
      running = true;
      needFanOut = true;
      needClaim = true;
      loop = runLoop();
    },
    /** Stops claiming; resolves when the deliveries in flight have been sent and recorded (each bounded by the timeout). */
    async stop(): Promise<void> {
      running = false;
      wake?.();
      await loop;
    },
    /** For tests and the benchmark: one fan-out pass now. */
    fanOut,
  };
}
export type Dispatcher = ReturnType<typeof createDispatcher>;
