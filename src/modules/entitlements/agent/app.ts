import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { DECISION_PATHS, parseDecisionRequest, type DecisionKind, type Engine } from '../engine/index.ts';

const INVALID = Symbol('invalid JSON');
const EMPTY_ENGINE_DECISION = { result: false } as const;

/**
 * The agent's HTTP face (wire.md section 7): three decision routes and health. Well-formed requests always get a 200
 * decision (unknown accounts and features are negative decisions); malformed ones a 400 `{code, message}`.
 */
export async function createAgentApp(opts: { engine: () => Engine | undefined; offset?: () => number | undefined; logger: Logger | false; bodyLimit: number }) {
  const app = Fastify({
    // Per-request logs at info would cost more than the decisions: the HTTP layer logs warnings and errors only.
    ...(opts.logger ? { loggerInstance: opts.logger.child({}, { level: opts.logger.isLevelEnabled('warn') ? 'warn' : opts.logger.level }) as FastifyBaseLogger } : { logger: false }),
    // No per-request child logger (a pino child per decision costs more than the decision): request logs are off.
    childLoggerFactory: (logger) => logger,
    bodyLimit: opts.bodyLimit,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  // Any content type is read as JSON text: a policy engine's data API does not insist on the header.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch {
      done(null, INVALID);
    }
  });
  app.setErrorHandler((err: Error, _req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    if (status === 413) return reply.status(413).send({ code: 'invalid_parameter', message: 'request body too large' });
    if (status < 500) return reply.status(400).send({ code: 'invalid_parameter', message: err.message });
    return reply.status(500).send({ code: 'internal_error', message: 'internal error' });
  });
  app.setNotFoundHandler((req, reply) => reply.status(404).send({ code: 'resource_not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` }));

  // A response schema lets Fastify serialise decisions with a compiled serializer instead of JSON.stringify.
  const response = {
    200: {
      type: 'object',
      properties: {
        decision_id: { type: 'string' },
        metrics: { type: 'object', additionalProperties: { type: 'number' } },
        result: {
          type: 'object',
          properties: { result: { type: 'boolean' }, justification: { type: 'string' }, monitoring: { type: 'boolean' } },
          required: ['result'],
        },
      },
      required: ['decision_id', 'metrics', 'result'],
    },
    400: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] },
  };
  for (const [kind, path] of Object.entries(DECISION_PATHS) as [DecisionKind, string][]) {
    app.post(path, { schema: { response } }, async (req, reply) => {
      const started = process.hrtime.bigint();
      if (req.body === INVALID) return reply.status(400).send({ code: 'invalid_parameter', message: 'request body is not valid JSON' });
      const parsed = parseDecisionRequest(kind, req.body ?? {});
      if (!parsed.ok) return reply.status(400).send(parsed.error);
      const engine = opts.engine();
      const evalStart = process.hrtime.bigint();
      // Before any snapshot is loaded nothing is entitled (GET /health?bundles says 503 meanwhile).
      const result = engine ? engine.decide(kind, parsed.input) : kind === 'route' ? { result: false, justification: 'MISSING_ROUTE' } : { ...EMPTY_ENGINE_DECISION, justification: kind === 'feature' ? 'MISSING_FEATURE' : 'MISSING_PERMISSION' };
      const end = process.hrtime.bigint();
      const metrics = (req.query as Record<string, string | undefined>).metrics === 'true'
        ? { timer_rego_query_eval_ns: Number(end - evalStart), timer_server_handler_ns: Number(end - started) }
        : {};
      return { decision_id: randomUUID(), metrics, result };
    });
  }

  app.get('/health', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    if ('bundles' in q) {
      const ready = opts.engine() !== undefined;
      return reply.status(ready ? 200 : 503).send(ready ? { snapshotOffset: opts.offset?.() } : { code: 'unavailable', message: 'no entitlements snapshot loaded yet' });
    }
    return {};
  });
  return app;
}
