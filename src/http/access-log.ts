import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One access-log line per request, written when the answer is complete: the request (method, url, host, remote
 * address), the answer's status and the response time, under the request's `traceId`. Fastify's default writes two
 * lines (one on arrival, one on completion); on the sign-in and token paths the second line is a measurable share of
 * the main thread's work (docs/decisions.md, "One access-log line per request"). A request whose connection closes
 * before its answer was written gets a line saying so.
 */
export class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'traceId' });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished)
        reply.log.info(
          { req: request, responseTime: reply.elapsedTime },
          'request aborted (connection closed before the answer)',
        );
    });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error)
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
