import { createHmac } from 'node:crypto';

/** The signature of wire.md section 10: hex HMAC-SHA256(secret, `${timestamp}.${body}`), sent as `v1=<hex>`. */
export function sign(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
}

/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_BODY_LIMIT = 2048;

/**
 * POSTs one delivery, signed, with a hard timeout. Never throws: a network error, a timeout or a non-2xx answer is a
 * failed attempt. Redirects are not followed (a 3xx is a failure), and at most RESPONSE_BODY_LIMIT bytes are read.
 */
export async function send(url: string, secret: string, eventId: string, body: string, timeoutMs: number): Promise<SendResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      redirect: 'manual',
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Gatehouse-Webhooks/1',
        'gatehouse-webhook-id': eventId,
        'gatehouse-webhook-timestamp': String(timestamp),
        'gatehouse-signature': sign(secret, timestamp, body),
      },
    });
    const text = await readLimited(res);
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, body: text, error: ok ? null : `receiver answered ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const error = signal.aborted ? `timed out after ${timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(err));
    return { ok: false, status: null, body: null, error: String(error).slice(0, 500) };
  }
}

async function readLimited(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_BODY_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LIMIT);
}
