import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  DECISION_PATHS,
  parseDecisionRequest,
  type Decision,
  type DecisionKind,
  type Engine,
} from '../engine/index.ts';

/**
 * The agent's hot path: the three decision routes of wire.md section 7 answered straight from node:http, in front of
 * the agent's Fastify app (which keeps /health, 404s and every other path). A decision is a few microseconds of work;
 * Fastify's per-request machinery (request/reply objects, hooks, content-type parsing, serializer) cost more than the
 * decision itself, which kept one agent under 80 % of a trivial Fastify route (docs/decisions.md "Agent hot path").
 * What a client sees is unchanged: same paths, bodies, status codes, headers and error bodies.
 */

const KIND_BY_PATH = new Map<string, DecisionKind>(
  Object.entries(DECISION_PATHS).map(([k, p]) => [p, k as DecisionKind]),
);
const JSON_TYPE = 'application/json; charset=utf-8';
/** Fastify's default, kept so clients see the same keep-alive behaviour as on the Fastify routes. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

type Answer = { status: number; body: unknown };

const invalid = (message: string): Answer => ({ status: 400, body: { code: 'invalid_parameter', message } });

const MISSING: Record<DecisionKind, Decision> = {
  feature: { result: false, justification: 'MISSING_FEATURE' },
  permission: { result: false, justification: 'MISSING_PERMISSION' },
  route: { result: false, justification: 'MISSING_ROUTE' },
};

/** One decision request's answer, from its raw body text. Any content type is read as JSON (decisions "Agent"). */
export function answerDecision(
  kind: DecisionKind,
  text: string,
  engine: Engine | undefined,
  withMetrics: boolean,
): Answer {
  const started = withMetrics ? process.hrtime.bigint() : 0n;
  let body: unknown;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      return invalid('request body is not valid JSON');
    }
  }
  const parsed = parseDecisionRequest(kind, body ?? {});
  if (!parsed.ok) return { status: 400, body: parsed.error };
  const evalStart = withMetrics ? process.hrtime.bigint() : 0n;
  // Before any snapshot is loaded nothing is entitled (GET /health?bundles says 503 meanwhile).
  const d = engine ? engine.decide(kind, parsed.input) : MISSING[kind];
  const result: Decision = { result: d.result };
  if (d.justification !== undefined) result.justification = d.justification;
  if (d.monitoring !== undefined) result.monitoring = d.monitoring;
  let metrics = {};
  if (withMetrics) {
    const end = process.hrtime.bigint();
    metrics = { timer_rego_query_eval_ns: Number(end - evalStart), timer_server_handler_ns: Number(end - started) };
  }
  return { status: 200, body: { decision_id: randomUUID(), metrics, result } };
}

function send(res: ServerResponse, a: Answer, close = false): void {
  const payload = JSON.stringify(a.body);
  const headers: Record<string, string | number> = {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(payload),
  };
  if (close) headers.connection = 'close';
  res.writeHead(a.status, headers);
  res.end(payload);
}

function serve(
  kind: DecisionKind,
  query: string,
  req: IncomingMessage,
  res: ServerResponse,
  opts: DecisionServerOptions,
): void {
  if (opts.closing()) {
    send(res, { status: 503, body: { code: 'unavailable', message: 'the agent is shutting down' } }, true);
    req.resume();
    return;
  }
  const tooLarge = () => {
    send(res, { status: 413, body: { code: 'invalid_parameter', message: 'request body too large' } }, true);
    req.resume();
  };
  const declared = Number(req.headers['content-length']);
  if (declared > opts.bodyLimit) return tooLarge();
  const withMetrics = query !== '' && new URLSearchParams(query).get('metrics') === 'true';
  let text = '';
  let size = 0;
  let done = false;
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    if (done) return;
    size += Buffer.byteLength(chunk);
    if (size > opts.bodyLimit) {
      done = true;
      tooLarge();
      return;
    }
    text += chunk;
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    let a: Answer;
    try {
      a = answerDecision(kind, text, opts.engine(), withMetrics);
    } catch (err) {
      opts.onError(err);
      a = { status: 500, body: { code: 'internal_error', message: 'internal error' } };
    }
    send(res, a);
  });
  req.on('error', () => {
    done = true;
  });
}

export interface DecisionServerOptions {
  engine: () => Engine | undefined;
  bodyLimit: number;
  /** True once the app is closing: decisions answer 503 and close the connection, as Fastify's routes would. */
  closing: () => boolean;
  onError: (err: unknown) => void;
}

/** A Fastify `serverFactory`: decision POSTs are answered here, every other request goes to Fastify's handler. */
export function decisionServerFactory(opts: DecisionServerOptions): (handler: RequestListener) => Server {
  return (fastifyHandler) => {
    const server = createServer((req, res) => {
      if (req.method === 'POST') {
        const url = req.url ?? '';
        const q = url.indexOf('?');
        const kind = KIND_BY_PATH.get(q < 0 ? url : url.slice(0, q));
        if (kind) return serve(kind, q < 0 ? '' : url.slice(q + 1), req, res, opts);
      }
      fastifyHandler(req, res);
    });
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    return server;
  };
}
