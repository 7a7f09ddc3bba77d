import type { Queryable } from '../../storage/db.ts';

export interface WebhookRow {
  id: string;
  tenant_id: string | null;
  display_name: string;
  url: string;
  secret_sealed: string;
  event_keys: string[];
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  tenant_id: string | null;
  event_id: string;
  event_key: string;
  entity_key: string;
  body: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  give_up_at: Date;
  response_status: number | null;
  response_body: string | null;
  last_error: string | null;
  replay_of: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery
  extends Pick<DeliveryRow, 'id' | 'seq' | 'webhook_id' | 'event_id' | 'body' | 'attempts' | 'give_up_at'> {
  url: string;
  secret_sealed: string;
  is_active: boolean;
}

export async function insertWebhook(
  q: Queryable,
  w: Omit<WebhookRow, 'created_at' | 'updated_at'>,
): Promise<WebhookRow> {
  const { rows } = await q.query<WebhookRow>(
    `INSERT INTO webhooks (id, tenant_id, display_name, url, secret_sealed, event_keys, is_active)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [w.id, w.tenant_id, w.display_name, w.url, w.secret_sealed, w.event_keys, w.is_active],
  );
  return rows[0];
}

export async function findWebhook(q: Queryable, id: string): Promise<WebhookRow | undefined> {
  return (await q.query<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [id])).rows[0];
}

export async function listWebhooks(q: Queryable, tenantId?: string): Promise<WebhookRow[]> {
  if (tenantId)
    return (
      await q.query<WebhookRow>('SELECT * FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId])
    ).rows;
  return (await q.query<WebhookRow>('SELECT * FROM webhooks ORDER BY created_at, id')).rows;
}

export async function updateWebhook(
  q: Queryable,
  id: string,
  values: Record<string, unknown>,
): Promise<WebhookRow | undefined> {
  const cols = Object.keys(values);
  const set = cols.map((c, i) => `${c} = $${i + 2}`).join(', ');
  const { rows } = await q.query<WebhookRow>(
    `UPDATE webhooks SET ${set}, updated_at = now() WHERE id = $1 RETURNING *`,
    [id, ...cols.map((c) => values[c])],
  );
  return rows[0];
}

export async function deleteWebhook(q: Queryable, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM webhooks WHERE id = $1', [id])).rowCount > 0;
}

export async function activeWebhooks(
  q: Queryable,
): Promise<Pick<WebhookRow, 'id' | 'tenant_id' | 'event_keys' | 'created_at'>[]> {
  return (
    await q.query<Pick<WebhookRow, 'id' | 'tenant_id' | 'event_keys' | 'created_at'>>(
      'SELECT id, tenant_id, event_keys, created_at FROM webhooks WHERE is_active',
    )
  ).rows;
}

/** Takes the fan-out lock (one row), so fan-outs run one at a time and keep the events' order. */
export async function lockFanOut(q: Queryable): Promise<void> {
  await q.query('SELECT id FROM event_dispatch WHERE id = 1 FOR UPDATE');
}

export interface NewDelivery {
  id: string;
  webhook_id: string;
  tenant_id: string | null;
  event_id: string;
  event_key: string;
  entity_key: string;
  body: string;
  give_up_seconds: number;
  replay_of?: string | null;
  status?: 'pending' | 'delivering';
  attempts?: number;
}

/** Inserts deliveries in the given order (their seq orders delivery per endpoint and entity). */
export async function insertDeliveries(q: Queryable, rows: NewDelivery[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    const params: unknown[] = [];
    const values = chunk.map((r) => {
      params.push(
        r.id,
        r.webhook_id,
        r.tenant_id,
        r.event_id,
        r.event_key,
        r.entity_key,
        r.body,
        r.give_up_seconds,
        r.replay_of ?? null,
        r.status ?? 'pending',
        r.attempts ?? 0,
      );
      const b = params.length - 11;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, now() + make_interval(secs => $${b + 8}::int), $${b + 9}::uuid, $${b + 10}, $${b + 11}::int)`;
    });
    await q.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, event_id, event_key, entity_key, body, give_up_at, replay_of, status, attempts)
       VALUES ${values.join(', ')}`,
      params,
    );
  }
}

/**
 * Claims up to `limit` due deliveries: pending ones whose time has come, or ones whose worker died (lease expired).
 * Only the head of each (endpoint, entity) queue is eligible, so an entity's events are delivered in order.
 */
export async function claimDeliveries(
  q: Queryable,
  limit: number,
  leaseSeconds: number,
  skipWebhooks: string[],
): Promise<ClaimedDelivery[]> {
  const { rows } = await q.query<ClaimedDelivery>(
    `UPDATE webhook_deliveries d SET status = 'delivering', attempts = d.attempts + 1, locked_until = now() + make_interval(secs => $2::int)
     FROM webhooks w
     WHERE w.id = d.webhook_id AND d.id IN (
       SELECT c.id FROM webhook_deliveries c
       WHERE ((c.status = 'pending' AND c.next_attempt_at <= now()) OR (c.status = 'delivering' AND c.locked_until < now()))
         AND NOT (c.webhook_id = ANY($3::uuid[]))
         AND NOT EXISTS (
           SELECT 1 FROM webhook_deliveries e
           WHERE e.webhook_id = c.webhook_id AND e.entity_key = c.entity_key AND e.status IN ('pending', 'delivering') AND e.seq < c.seq)
       ORDER BY c.seq LIMIT $1 FOR UPDATE OF c SKIP LOCKED)
     RETURNING d.id, d.seq, d.webhook_id, d.event_id, d.body, d.attempts, d.give_up_at, w.url, w.secret_sealed, w.is_active`,
    [limit, leaseSeconds, skipWebhooks],
  );
  return rows.sort((a, b) => a.seq - b.seq);
}

export async function finishDelivery(
  q: Queryable,
  id: string,
  r: {
    ok: boolean;
    final: boolean;
    retryInMs: number;
    status: number | null;
    body: string | null;
    error: string | null;
  },
): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET
       status = CASE WHEN $2 THEN 'succeeded' WHEN $3 THEN 'failed' ELSE 'pending' END,
       next_attempt_at = CASE WHEN $2 OR $3 THEN next_attempt_at ELSE now() + make_interval(secs => $4::float8 / 1000) END,
       completed_at = CASE WHEN $2 OR $3 THEN now() ELSE NULL END,
       locked_until = NULL, response_status = $5, response_body = $6, last_error = $7
     WHERE id = $1`,
    [id, r.ok, !r.ok && r.final, r.retryInMs, r.status, r.body, r.error],
  );
}

export async function findDelivery(q: Queryable, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
  return (
    await q.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND id = $2', [webhookId, id])
  ).rows[0];
}

export async function listDeliveries(
  q: Queryable,
  webhookId: string,
  o: { offset: number; limit: number; status?: string },
) {
  const where = o.status ? 'webhook_id = $1 AND status = $2' : 'webhook_id = $1';
  const params: unknown[] = o.status ? [webhookId, o.status] : [webhookId];
  const total = Number(
    (await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`, params)).rows[0]
      .n,
  );
  const { rows } = await q.query<DeliveryRow>(
    `SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY seq DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, o.limit, o.offset],
  );
  return { rows, total };
}

/**
 * Retention, one bounded batch: delivery-log rows created before `before` that are finished (succeeded, failed) or
 * past their retry window. Answers how many were removed.
 */
export async function removeOldDeliveries(q: Queryable, before: Date, limit: number): Promise<number> {
  return (
    await q.query(
      `DELETE FROM webhook_deliveries WHERE seq IN (
       SELECT seq FROM webhook_deliveries
       WHERE created_at < $1 AND (status IN ('succeeded', 'failed') OR give_up_at < now())
       ORDER BY seq LIMIT $2)`,
      [before, limit],
    )
  ).rowCount;
}
