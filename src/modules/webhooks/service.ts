import { decrypt, encrypt, newId, randomSecret } from '../../lib/crypto.ts';
import { iso } from '../../lib/time.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db } from '../../storage/db.ts';
import { send } from './deliver.ts';
import { assertWebhookUrl } from './ssrf.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { CreateWebhook, Delivery, UpdateWebhook, Webhook } from './schema.ts';
import * as store from './store.ts';
import type { EventFeed } from './subscriptions.ts';

export interface WebhooksDeps {
  db: Db;
  kek: Buffer;
  dispatcher: Dispatcher;
  /** The events outbox (the events module's eventFeed): its catalogue and retention. */
  feed: EventFeed;
  timeoutMs: number;
  retryForSeconds: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS (default true): false refuses URLs whose host is or resolves to a private address. */
  allowPrivateNetworks?: boolean;
  /** EVENTS_RETENTION_DAYS: outbox and delivery-log rows older than this are removed (0 keeps them). */
  retentionDays?: number;
  /** Throws ACCOUNT_NOT_FOUND for an unknown account (an account-level webhook needs a live account). */
  requireAccount: (q: Db, tenantId: string) => Promise<unknown>;
}

const toWebhook = (r: store.WebhookRow): Webhook => ({
  id: r.id,
  displayName: r.display_name,
  url: r.url,
  eventKeys: r.event_keys,
  isActive: r.is_active,
  tenantId: r.tenant_id,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

export const toDelivery = (r: store.DeliveryRow): Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventId: r.event_id,
  eventKey: r.event_key,
  tenantId: r.tenant_id,
  status: r.status,
  attempts: r.attempts,
  responseStatus: r.response_status,
  responseBody: r.response_body,
  lastError: r.last_error,
  nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
  replayOf: r.replay_of,
  createdAt: iso(r.created_at)!,
  completedAt: iso(r.completed_at),
});

export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** Webhook endpoints (vendor-managed) and their delivery log; delivery itself is the dispatcher's. */
export function createWebhooksService(deps: WebhooksDeps) {
  const { db, kek } = deps;
  const allowPrivate = deps.allowPrivateNetworks !== false;

  async function requireWebhook(id: string, tenantId?: string): Promise<store.WebhookRow> {
    const row = isUuid(id) ? await store.findWebhook(db, id) : undefined;
    if (!row || (tenantId && row.tenant_id !== tenantId))
      throw new AppError('WEBHOOK_NOT_FOUND', `No webhook with id ${id}`);
    return row;
  }

  return {
    /** The keys an endpoint may subscribe to (the event catalogue). */
    eventKeys: deps.feed.keys,

    async create(body: CreateWebhook): Promise<Webhook> {
      await assertWebhookUrl(body.url, allowPrivate);
      const generated = body.secret === undefined ? randomSecret(32) : undefined;
      return db.transaction(async (tx) => {
        if (body.tenantId) await deps.requireAccount(tx, body.tenantId);
        const row = await store.insertWebhook(tx, {
          id: newId(),
          tenant_id: body.tenantId ?? null,
          display_name: body.displayName,
          url: body.url,
          secret_sealed: encrypt(kek, body.secret ?? generated!),
          event_keys: body.eventKeys,
          is_active: body.isActive ?? true,
        });
        // A secret Gatehouse generated is shown once, here; a secret the caller chose is never echoed.
        return generated ? { ...toWebhook(row), secret: generated } : toWebhook(row);
      });
    },

    async list(tenantId?: string): Promise<Webhook[]> {
      return (await store.listWebhooks(db, tenantId)).map(toWebhook);
    },

    async get(id: string, tenantId?: string): Promise<Webhook> {
      return toWebhook(await requireWebhook(id, tenantId));
    },

    async update(id: string, body: UpdateWebhook, tenantId?: string): Promise<Webhook> {
      await requireWebhook(id, tenantId);
      if (body.url !== undefined) await assertWebhookUrl(body.url, allowPrivate);
      const values: Record<string, unknown> = {};
      if (body.displayName !== undefined) values.display_name = body.displayName;
      if (body.url !== undefined) values.url = body.url;
      if (body.secret !== undefined) values.secret_sealed = encrypt(kek, body.secret);
      if (body.eventKeys !== undefined) values.event_keys = body.eventKeys;
      if (body.isActive !== undefined) values.is_active = body.isActive;
      if (Object.keys(values).length === 0)
        throw new AppError(
          'VALIDATION',
          'The body must set at least one of displayName, url, secret, eventKeys, isActive',
        );
      const row = await store.updateWebhook(db, id, values);
      if (!row) throw new AppError('WEBHOOK_NOT_FOUND', `No webhook with id ${id}`);
      return toWebhook(row);
    },

    /** Removes the endpoint and its delivery log; deliveries not yet sent are dropped. */
    async remove(id: string, tenantId?: string): Promise<void> {
      await requireWebhook(id, tenantId);
      await store.deleteWebhook(db, id);
    },

    async logs(id: string, q: { offset?: number; limit?: number; status?: string }, tenantId?: string) {
      await requireWebhook(id, tenantId);
      const { rows, total } = await store.listDeliveries(db, id, {
        offset: q.offset ?? 0,
        limit: q.limit ?? 50,
        status: q.status,
      });
      return { data: rows.map(toDelivery), total };
    },

    /**
     * Sends a `webhook.test` event to the endpoint now (one attempt, the delivery timeout bounds the wait; no retry)
     * and answers the outcome; the attempt is in the delivery log like any other.
     */
    async test(id: string, tenantId?: string) {
      const hook = await requireWebhook(id, tenantId);
      const eventId = newId();
      const deliveryId = newId();
      const body = JSON.stringify({
        id: eventId,
        eventKey: 'webhook.test',
        createdAt: new Date().toISOString(),
        tenantId: hook.tenant_id,
        data: { webhookId: hook.id, test: true },
      });
      await store.insertDeliveries(db, [
        {
          id: deliveryId,
          webhook_id: hook.id,
          tenant_id: hook.tenant_id,
          event_id: eventId,
          event_key: 'webhook.test',
          entity_key: `test:${deliveryId}`,
          body,
          give_up_seconds: 0,
          status: 'delivering',
          attempts: 1,
        },
      ]);
      const r = await send(hook.url, decrypt(kek, hook.secret_sealed), eventId, body, deps.timeoutMs, allowPrivate);
      await store.finishDelivery(db, deliveryId, { ...r, final: true, retryInMs: 0 });
      return {
        deliveryId,
        eventId,
        status: r.ok ? 'succeeded' : 'failed',
        responseStatus: r.status,
        responseBody: r.body,
        error: r.error,
      };
    },

    /**
     * Retention (run hourly with the audit retention job): removes delivery-log rows older than EVENTS_RETENTION_DAYS
     * that are finished or past their retry window, then outbox events as old that were fanned out and have nothing
     * left to send. Bounded batches (one short statement each), so the tables are never locked for long.
     */
    async applyRetention(now = new Date(), batch = 5000): Promise<number> {
      if (!deps.retentionDays) return 0;
      const before = new Date(now.getTime() - deps.retentionDays * 86_400_000);
      let removed = 0;
      for (const step of [store.removeOldDeliveries, deps.feed.removeOld]) {
        for (;;) {
          const n = await step(db, before, batch);
          removed += n;
          if (n < batch) break;
        }
      }
      return removed;
    },

    /** Queues the delivery's body again (same event id, a new delivery row), behind the entity's pending deliveries. */
    async replay(id: string, deliveryId: string, tenantId?: string): Promise<Delivery> {
      await requireWebhook(id, tenantId);
      const original = isUuid(deliveryId) ? await store.findDelivery(db, id, deliveryId) : undefined;
      if (!original) throw new AppError('DELIVERY_NOT_FOUND', `Webhook ${id} has no delivery ${deliveryId}`);
      const copyId = newId();
      await store.insertDeliveries(db, [
        {
          id: copyId,
          webhook_id: id,
          tenant_id: original.tenant_id,
          event_id: original.event_id,
          event_key: original.event_key,
          entity_key: original.entity_key,
          body: original.body,
          give_up_seconds: deps.retryForSeconds,
          replay_of: original.id,
        },
      ]);
      deps.dispatcher.notify();
      return toDelivery((await store.findDelivery(db, id, copyId))!);
    },
  };
}
