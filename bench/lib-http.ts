import http from 'node:http';
import { stats, type Stats } from './lib-stats.ts';

// ---------------------------------------------------------------------------------------------------------------
// The app over real HTTP

export interface HttpReply<T = any> {
  status: number;
  body: T;
  /** Request start to the last byte of the body (before JSON parsing). */
  ms: number;
  bytes: number;
}

/**
 * One keep-alive connection over loopback; requests are sequential, so each sample is the latency of one request
 * through Node's HTTP client, the kernel's loopback, Fastify (auth, validation, serialisation) and the database.
 */
export function httpClient(baseUrl: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(baseUrl);
  let token: string | undefined;
  function request<T = any>(
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<HttpReply<T>> {
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string | number> = { accept: 'application/json', ...(opts.headers ?? {}) };
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    return new Promise((resolvePromise, reject) => {
      const start = performance.now();
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const elapsed = performance.now() - start;
          const raw = Buffer.concat(chunks);
          let body: unknown = raw.toString('utf8');
          try {
            body = raw.length ? JSON.parse(body as string) : undefined;
          } catch {
            /* not JSON */
          }
          resolvePromise({ status: res.statusCode ?? 0, body: body as T, ms: elapsed, bytes: raw.length });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }
  return {
    request,
    setToken(t: string) {
      token = t;
    },
    close() {
      agent.destroy();
    },
  };
}

export type HttpClient = ReturnType<typeof httpClient>;

/**
 * Times `fn` sequentially: `warmup` untimed calls, then up to `n` timed ones, stopping early (after at least `minN`)
 * once `budgetMs` of wall time is spent, so a slow case cannot stretch the run.
 */
export async function measure(
  fn: () => Promise<HttpReply>,
  opts: { n: number; warmup?: number; budgetMs?: number; minN?: number; check?: (r: HttpReply) => void },
): Promise<Stats & { samples: number[] }> {
  for (let i = 0; i < (opts.warmup ?? 5); i++) opts.check?.(await fn());
  const samples: number[] = [];
  const start = performance.now();
  const minN = Math.min(opts.n, opts.minN ?? 50);
  while (samples.length < opts.n) {
    const r = await fn();
    opts.check?.(r);
    samples.push(r.ms);
    if (samples.length >= minN && opts.budgetMs !== undefined && performance.now() - start > opts.budgetMs) break;
  }
  return { ...stats(samples), samples };
}
