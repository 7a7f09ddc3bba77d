import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress } from './ssrf.ts';

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

/** Idle kept-alive sockets are closed before common server keep-alive timeouts (Node: 5 s) close them under us. */
const IDLE_MS = 4000;

/** Keep-alive connection pools; the guarded ones resolve through `guardedLookup` (new connections are checked). */
const AGENTS: Record<string, HttpAgent> = {
  'http:open': new HttpAgent({ keepAlive: true, maxFreeSockets: 64, timeout: IDLE_MS }),
  'https:open': new HttpsAgent({ keepAlive: true, maxFreeSockets: 64, timeout: IDLE_MS }),
  'http:guarded': new HttpAgent({
    keepAlive: true,
    maxFreeSockets: 64,
    timeout: IDLE_MS,
    lookup: guardedLookup as never,
  }),
  'https:guarded': new HttpsAgent({
    keepAlive: true,
    maxFreeSockets: 64,
    timeout: IDLE_MS,
    lookup: guardedLookup as never,
  }),
};

/**
 * POSTs one delivery, signed, with a hard timeout. Never throws: a network error, a timeout or a non-2xx answer is a
 * failed attempt. Redirects are not followed (a 3xx is a failure), and at most RESPONSE_BODY_LIMIT bytes are read.
 * Only http(s); with `allowPrivate` false the address is checked when the socket resolves it (see ssrf.ts), so a
 * host whose DNS changed to a private address since the URL was saved is refused too.
 */
export async function send(
  url: string,
  secret: string,
  eventId: string,
  body: string,
  timeoutMs: number,
  allowPrivate = true,
  retried = false,
): Promise<SendResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const fail = (error: string): SendResult => ({ ok: false, status: null, body: null, error: error.slice(0, 500) });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return fail('the webhook URL is not valid');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return fail(`refused: the ${u.protocol} scheme (http and https only)`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isPrivateAddress(host))
    return fail(`refused: ${host} is a private address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`);
  return new Promise<SendResult>((resolve) => {
    let done = false;
    // The socket is kept for the next delivery (keep-alive) only when the answer was read to its end.
    const finish = (r: SendResult, keep = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!keep) req.destroy();
      resolve(r);
    };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
      method: 'POST',
      agent: AGENTS[`${u.protocol}${allowPrivate ? 'open' : 'guarded'}`],
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Gatehouse-Webhooks/1',
        'gatehouse-webhook-id': eventId,
        'gatehouse-webhook-timestamp': String(timestamp),
        'gatehouse-signature': sign(secret, timestamp, body),
      },
    });
    const timer = setTimeout(() => finish(fail(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the receiver closed meanwhile (the keep-alive race): send once more on a fresh one.
      if (!retried && !done && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        done = true;
        clearTimeout(timer);
        return void send(url, secret, eventId, body, timeoutMs, allowPrivate, true).then(resolve);
      }
      finish(fail(err.code === 'OUTBOUND_ADDRESS_REFUSED' ? err.message : (err.code ?? err.message ?? String(err))));
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const end = (complete: boolean) => {
        const ok = status >= 200 && status < 300;
        finish(
          {
            ok,
            status,
            body: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LIMIT),
            error: ok ? null : `receiver answered ${status}`,
          },
          complete,
        );
      };
      res.on('data', (c: Buffer) => {
        if (size >= RESPONSE_BODY_LIMIT) return;
        chunks.push(c);
        size += c.byteLength;
        if (size >= RESPONSE_BODY_LIMIT) end(false);
      });
      res.on('end', () => end(true));
      res.on('error', () => end(false));
    });
    req.end(body);
  });
}
