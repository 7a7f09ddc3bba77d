import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Api } from './fleet.ts';

/** Traffic and a webhook receiver for the fleet tests: what clients saw, with times, while instances died. */

export interface Outcome {
  kind: string;
  start: number;
  end: number;
  /** The HTTP status, or 0 when the request got no answer at all. */
  status: number;
  id: string;
  /** For a failure: the error code or message (to tell the balancer's answers from the instances'). */
  detail?: string;
}

/**
 * `workers` clients in a loop until `stop()`: each creates an account (a write) and reads it back (a read).
 * Answers every request's outcome and the ids of the accounts whose creation was acknowledged (201).
 */
export function mixedLoad(lb: Api, token: string, prefix: string, workers: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const timed = async (kind: string, id: string, f: () => Promise<{ status: number; body: any }>) => {
    const start = Date.now();
    const { status, detail } = await f().then(
      (r) => ({ status: r.status, detail: r.status >= 500 ? JSON.stringify(r.body).slice(0, 160) : undefined }),
      (err: Error) => ({ status: 0, detail: String(err.cause ?? err.message) }),
    );
    outcomes.push({ kind, start, end: Date.now(), status, id, detail });
    return status;
  };
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let n = 0; running; n++) {
      const id = `${prefix}-${w}-${n}`;
      const body = { tenantId: id, name: id };
      const created = await timed('create', id, () =>
        lb.call('POST', '/tenants/resources/tenants/v1', { token, body }),
      );
      if (created === 201)
        await timed('read', id, () => lb.call('GET', `/tenants/resources/tenants/v2/${id}`, { token }));
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/**
 * A webhook endpoint that can hold its answers (so deliveries are in flight when an instance dies): records each
 * arrival by event id, the ones answered 2xx, and the ones whose connection closed before the answer.
 */
export async function webhookReceiver() {
  const arrivals = new Map<string, number>();
  const answered = new Map<string, number>();
  const cut = new Set<string>();
  let holding = true;
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const id = String(req.headers['gatehouse-webhook-id']);
    req.resume();
    req.on('end', () => {
      arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
      res.on('close', () => {
        if (res.writableFinished) answered.set(id, Date.now());
        else cut.add(id);
      });
      if (holding) held.push(res);
      else res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    answered,
    /** Event ids whose delivery connection was closed by the sender before an answer (the sender died). */
    cut,
    held: () => held.filter((r) => !r.destroyed).length,
    /** Answers every held delivery and every later one at once. */
    release() {
      holding = false;
      for (const r of held.splice(0)) if (!r.destroyed) r.end('ok');
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Failed outcomes (no answer or a 5xx) and the span from `from` to the end of the last one. */
export function failures(outcomes: Outcome[], from: number, to = Infinity) {
  const failed = outcomes.filter((o) => (o.status === 0 || o.status >= 500) && o.end >= from && o.start <= to);
  const lastEnd = failed.reduce((m, o) => Math.max(m, o.end), from);
  return { failed, spanMs: lastEnd - from };
}
