import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createContext, createLogger, type Context } from '../../src/context.ts';
import { buildApp } from '../../src/routes.ts';
import type { ClosableDb } from '../../src/storage/db.ts';
import type { Logger } from 'pino';
import { openTestDb } from './db.ts';

export const VENDOR = { clientId: 'test-client', secret: 'test-api-key-0123456789' };

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw payload (string) sent as is, for malformed-body tests. */
  raw?: string;
  /** The client address the server sees (`req.ip`); inject's default is 127.0.0.1. */
  remoteAddress?: string;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

/**
 * The whole API in-process over a real database, driven through HTTP with `app.inject`. Environment variables for
 * the config can be overridden per test file. Call `close()` in an `after` hook.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  opts: { db?: ClosableDb; jobs?: boolean; log?: Logger } = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    GATEHOUSE_ENCRYPTION_KEY: 'test-encryption-key',
    GATEHOUSE_CLIENT_ID: VENDOR.clientId,
    GATEHOUSE_API_KEY: VENDOR.secret,
    JOB_POLL_MS: '20',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const db = opts.db ?? (await openTestDb());
  const ctx = await createContext(config, db, opts.log ?? createLogger(config));
  await ctx.environment.bootstrap({ clientId: VENDOR.clientId, apiKey: VENDOR.secret });
  const app = await buildApp(ctx);
  if (opts.jobs !== false) ctx.jobs.start();

  async function call<T = any>(method: string, url: string, o: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let payload: string | undefined;
    if (o.raw !== undefined) payload = o.raw;
    else if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers,
      payload,
      ...(o.remoteAddress ? { remoteAddress: o.remoteAddress } : {}),
    });
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.statusCode, body: body as T, headers: res.headers as Reply['headers'] };
  }

  let vendor: string | undefined;
  return {
    app,
    ctx: ctx as Context,
    db,
    call,
    /** A vendor token from POST /auth/vendor with the test credentials. */
    async vendorToken(): Promise<string> {
      if (!vendor) {
        const r = await call('POST', '/auth/vendor', { body: VENDOR });
        if (r.status !== 200) throw new Error(`vendor auth failed: ${r.status} ${JSON.stringify(r.body)}`);
        vendor = r.body.token as string;
      }
      return vendor;
    },
    /** Mints a user token with the server's own key (login arrives with the identity issue). */
    async userToken(
      claims: { sub?: string; tenantId: string; permissions?: string[]; roles?: string[]; tenantIds?: string[] },
      ttl = 300,
    ) {
      return ctx.keys.sign(
        {
          type: 'userToken',
          sub: claims.sub ?? 'user-1',
          email: 'user@example.com',
          tenantId: claims.tenantId,
          tenantIds: claims.tenantIds ?? [claims.tenantId],
          roles: claims.roles ?? [],
          permissions: claims.permissions ?? [],
          aud: ctx.environment.id,
        },
        ttl,
      );
    },
    async close(): Promise<void> {
      await app.close();
      await ctx.jobs.stop();
      if (!opts.db) await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
