import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { Engine } from '../engine/index.ts';
import { decisionServerFactory } from './decision-server.ts';

/**
 * The agent's HTTP face (wire.md section 7): three decision routes and health. Well-formed requests always get a 200
 * decision (unknown accounts and features are negative decisions); malformed ones a 400 `{code, message}`. The
 * decision routes are served by decision-server.ts in front of Fastify (the hot path); Fastify serves the rest.
 */
export async function createAgentApp(opts: {
  engine: () => Engine | undefined;
  offset?: () => number | undefined;
  logger: Logger | false;
  bodyLimit: number;
}) {
  let closing = false;
  const app = Fastify({
    serverFactory: decisionServerFactory({
      engine: opts.engine,
      bodyLimit: opts.bodyLimit,
      closing: () => closing,
      onError: (err) => app.log.error({ err }, 'decision failed'),
    }),
    // Per-request logs at info would cost more than the decisions: the HTTP layer logs warnings and errors only.
    ...(opts.logger
      ? {
          loggerInstance: opts.logger.child(
            {},
            { level: opts.logger.isLevelEnabled('warn') ? 'warn' : opts.logger.level },
          ) as FastifyBaseLogger,
        }
      : { logger: false }),
    // No per-request child logger (a pino child per decision costs more than the decision): request logs are off.
    childLoggerFactory: (logger) => logger,
    bodyLimit: opts.bodyLimit,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  // No Fastify route here takes a body (decisions are answered before Fastify): any other POST is a plain 404.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, _body, done) => done(null, undefined));
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.setErrorHandler((err: Error, _req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    if (status === 413) return reply.status(413).send({ code: 'invalid_parameter', message: 'request body too large' });
    if (status < 500) return reply.status(400).send({ code: 'invalid_parameter', message: err.message });
    return reply.status(500).send({ code: 'internal_error', message: 'internal error' });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ code: 'resource_not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );

  app.get('/health', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    if ('bundles' in q) {
      const ready = opts.engine() !== undefined;
      return reply
        .status(ready ? 200 : 503)
        .send(
          ready
            ? { snapshotOffset: opts.offset?.() }
            : { code: 'unavailable', message: 'no entitlements snapshot loaded yet' },
        );
    }
    return {};
  });
  return app;
}
