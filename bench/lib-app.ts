import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContext, LOG_REDACT, type Context } from '../src/context.ts';
import { buildApp } from '../src/routes.ts';
import type { ClosableDb } from '../src/storage/db.ts';
import { httpClient, type HttpClient } from './lib-http.ts';
import { BENCH_ENCRYPTION_KEY, BENCH_VENDOR } from './lib-settings.ts';
import type { BenchDb } from './lib-stores.ts';

// ---------------------------------------------------------------------------------------------------------------
// The whole API in-process for a benchmark, over real HTTP on loopback

export interface BenchApp {
  ctx: Context;
  /** A keep-alive client carrying the vendor token. */
  client: HttpClient;
  baseUrl: string;
  vendorToken: string;
  /** A fresh keep-alive client (one connection), optionally with a bearer token; closed with the app. */
  newClient(token?: string): HttpClient;
  close(): Promise<void>;
}

/** Every benchmark sign-in comes from 127.0.0.1, often as one user: raise the limiter so sign-in itself is measured. */
export const RAISED_SIGNIN_LIMITS = {
  LOGIN_RATE_LIMIT_PER_IP: '100000',
  LOGIN_RATE_LIMIT_PER_IDENTIFIER: '100000',
  LOGIN_RATE_LIMIT_PER_IP_IDENTIFIER: '100000',
  LOGIN_FLOOD_LIMIT_PER_IP: '10000000',
};

/**
 * The whole API in-process (createContext + buildApp, as src/server.ts wires it) listening on an ephemeral loopback
 * port, with the vendor token already fetched. Request logging stays on at the server's default level (info) but goes
 * to /dev/null, so its cost is in the figures without flooding the terminal. `env` overrides the config; `log`
 * replaces the logger; `port` fixes the port (for a PUBLIC_URL naming it: the OpenID issuer, page redirects).
 */
export async function startBenchApp(
  bdb: BenchDb,
  db: ClosableDb = bdb.db,
  opts: { jobs?: boolean; env?: Record<string, string>; log?: pino.Logger; port?: number } = {},
): Promise<BenchApp> {
  const config = loadConfig({
    DATA_DIR: bdb.dataDir,
    GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    GATEHOUSE_CLIENT_ID: BENCH_VENDOR.clientId,
    GATEHOUSE_API_KEY: BENCH_VENDOR.secret,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    ...opts.env,
  });
  const log =
    opts.log ??
    pino(
      { level: config.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' } },
      pino.destination({ dest: '/dev/null', sync: false }),
    );
  const ctx = await createContext(config, db, log);
  await ctx.environment.bootstrap({ clientId: BENCH_VENDOR.clientId, apiKey: BENCH_VENDOR.secret });
  const app = await buildApp(ctx);
  await app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  if (opts.jobs) ctx.jobs.start();
  const clients: HttpClient[] = [];
  const newClient = (token?: string) => {
    const c = httpClient(baseUrl);
    if (token) c.setToken(token);
    clients.push(c);
    return c;
  };
  const client = newClient();
  const auth = await client.request('POST', '/auth/vendor', { body: BENCH_VENDOR });
  if (auth.status !== 200) throw new Error(`vendor auth failed: ${auth.status} ${JSON.stringify(auth.body)}`);
  client.setToken(auth.body.token);
  return {
    ctx,
    client,
    baseUrl,
    vendorToken: auth.body.token,
    newClient,
    async close() {
      for (const c of clients) c.close();
      await app.close();
      await ctx.jobs.stop();
    },
  };
}
