import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { AccessLog } from './access-log.ts';
import type { Logger } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import { installAuth, type Authenticate, type UserAuth } from './auth.ts';
import { frameworkError, installErrorHandler } from './error-handler.ts';
import { installInputGuard } from './input-guard.ts';
import { installOpenApi } from './openapi.ts';
import { installValidation, schemaController } from './validation.ts';

export type App = FastifyInstance;

export interface HttpOptions {
  bodyLimit: number;
  /** Fastify's `trustProxy`: who may set the client address through X-Forwarded-For (config TRUST_PROXY). */
  trustProxy: boolean | number | string[];
  publicUrl: string;
  logger: Logger | false;
  authenticate: Authenticate;
  /** Further URL rewrites of the modules (applied after the compatibility prefix is stripped). */
  rewriteUrl?: (url: string) => string;
  /** Seconds an authentication stays recent enough for identity-changing routes (config RECENT_AUTH_MAX_AGE). */
  recentAuthMaxAge?: number;
  /** Throws unless a user token's session and membership are still live. */
  checkLive?: (auth: UserAuth) => Promise<void>;
  /** Readiness probe behind GET /ready (the database answers). */
  ready: () => Promise<boolean>;
  /** True once the server drains (SIGTERM): /ready answers 503 so a balancer stops sending. */
  draining?: () => boolean;
}

const trustHops = (n: number) => (_addr: string, hop: number) => hop < n;

/** Strips the `/frontegg` compatibility prefix so every route answers under it too. */
export function rewriteCompatPrefix(url: string): string {
  if (url === '/frontegg') return '/';
  return url.startsWith('/frontegg/') || url.startsWith('/frontegg?') ? url.slice('/frontegg'.length) : url;
}

/**
 * The HTTP shell shared by every module: JSON only, body limit, trace ids, the wire error body, guards, OpenAPI and
 * health. Modules register their routes into the returned instance (see src/routes.ts).
 */
export async function createHttp(opts: HttpOptions) {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger as FastifyBaseLogger } : { logger: false }),
    bodyLimit: opts.bodyLimit,
    // A hop count trusts that many proxies nearest the server (Fastify's typings take it as a function).
    trustProxy: typeof opts.trustProxy === 'number' ? trustHops(opts.trustProxy) : opts.trustProxy,
    genReqId: () => randomUUID().replace(/-/g, ''),
    logController: new AccessLog(),
    rewriteUrl: (req) => {
      const url = rewriteCompatPrefix(req.url ?? '/');
      return opts.rewriteUrl ? opts.rewriteUrl(url) : url;
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    // A malformed URL or an over-long path parameter is answered by the error handlers, in each prefix's own body.
    frameworkErrors: frameworkError,
    schemaController,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (req, reply) => {
    reply.header('gatehouse-trace-id', req.id);
  });
  // JSON only: drop the default text/plain parser; anything but application/json is a 415. An empty body is no body:
  // client libraries send `content-type: application/json` on a DELETE without one.
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    (body as string).trim() === '' ? done(null, undefined) : parseJson(req, body as string, done),
  );

  installValidation(app);
  installInputGuard(app);
  installErrorHandler(app);
  installAuth(app, opts.authenticate, { recentAuthMaxAge: opts.recentAuthMaxAge ?? 300, checkLive: opts.checkLive });
  await installOpenApi(app, opts.publicUrl);

  // Liveness: the process answers. Readiness: not draining and the database answers (what a balancer checks).
  app.get('/health', { config: { auth: 'public' }, schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/ready', { config: { auth: 'public' }, schema: { hide: true } }, async (_req, reply) => {
    if (opts.draining?.()) return reply.status(503).send({ status: 'draining' });
    const ok = await opts.ready().catch(() => false);
    return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable' });
  });
  return app;
}

export type HttpApp = Awaited<ReturnType<typeof createHttp>>;
