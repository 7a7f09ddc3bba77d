import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorBody, scimErrorBody } from './errors.ts';

const SCIM_PATH = /^\/directory\/resources\/scim\//;
const OAUTH_PATH = /^\/oauth(\/|$|\?)/;

/**
 * Answers an error the framework raised before any route ran (unknown route, malformed URL, over-long parameter) in
 * the body the path's clients read: SCIM's for the SCIM service, RFC 6749's under /oauth, else the wire body.
 */
function sendOutsideRoute(req: FastifyRequest, reply: FastifyReply, e: AppError) {
  const url = req.url ?? '';
  if (SCIM_PATH.test(url)) {
    return reply.status(e.status).type('application/scim+json; charset=utf-8').send(scimErrorBody(e.status, e.message));
  }
  if (OAUTH_PATH.test(url)) {
    return reply
      .status(e.status)
      .header('cache-control', 'no-store')
      .send({ error: 'invalid_request', error_description: e.message });
  }
  return reply.status(e.status).send(errorBody(e));
}

/** Fastify's `frameworkErrors`: a malformed URL or an over-long path parameter (no route context yet). */
export function frameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const path = (req.url ?? '').split('?')[0];
  const e =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('PATH_PARAM_TOO_LONG', `A path parameter of ${path.slice(0, 200)} is longer than 512 characters`)
      : new AppError(
          'BAD_URL',
          `The request URL ${path.slice(0, 200)} is not a valid URL (malformed percent-encoding)`,
        );
  return sendOutsideRoute(req, reply, e);
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `body.name must be string`, `querystring._limit must be <= 200`, `body.tenantId is required`. */
export function describeValidation(context: string | undefined, issues: AjvIssue[]): string[] {
  return issues.map((i) => {
    const path = (i.instancePath ?? '').split('/').filter(Boolean).join('.');
    const where = [context, path].filter(Boolean).join('.');
    if (i.keyword === 'required')
      return `${[where, String(i.params?.missingProperty)].filter(Boolean).join('.')} is required`;
    if (i.keyword === 'additionalProperties')
      return `${[where, String(i.params?.additionalProperty)].filter(Boolean).join('.')} is not an allowed field`;
    if (i.keyword === 'enum')
      return `${where || 'value'} must be one of ${(i.params?.allowedValues as unknown[] | undefined)?.join(', ')}`;
    return `${where || 'value'} ${i.message ?? 'is invalid'}`;
  });
}

/**
 * A safety net for input the services did not catch but PostgreSQL refused (class 22: data exceptions such as a
 * NUL character or an out-of-range number; class 23: integrity violations; 54000: a value too long for an index). Such input is the client's mistake:
 * a 400 or 409, never a 500. The database's own message is not passed on.
 */
function databaseRejection(sqlState: string): AppError {
  if (sqlState === '23505') return new AppError('CONFLICT', 'The request conflicts with an existing record');
  if (sqlState === '23503')
    return new AppError(
      'CONFLICT',
      'The request refers to a record that does not exist, or one that is still referred to',
    );
  // 54000: a value too large for an index entry (a very long name or identifier that compresses badly).
  if (sqlState === '54000') return new AppError('VALIDATION', 'A value in the request is too long to store');
  return new AppError(
    'VALIDATION',
    sqlState.startsWith('22')
      ? 'A value in the request cannot be stored (for example a NUL character, invalid text or a number out of range)'
      : 'The request breaks a rule of the stored data',
  );
}

/** Maps every failure to the wire body. Client mistakes are 4xx with a message naming field and rule; nothing else leaks. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) => {
    let appErr: AppError;
    if (err instanceof AppError) {
      appErr = err;
    } else if ((err as FastifyError).validation) {
      const fe = err as FastifyError;
      const messages = describeValidation(fe.validationContext, fe.validation as AjvIssue[]);
      appErr = new AppError('VALIDATION', messages.join('; '));
      return reply.status(400).send({ errors: messages, errorCode: appErr.errorCode });
    } else {
      const fe = err as FastifyError;
      switch (fe.code) {
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          appErr = new AppError(
            'BODY_TOO_LARGE',
            `Request body is larger than the limit of ${app.initialConfig.bodyLimit} bytes`,
          );
          break;
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          appErr = new AppError('UNSUPPORTED_MEDIA_TYPE');
          break;
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          appErr = new AppError('INVALID_JSON', 'Request body is empty but content-type is application/json');
          break;
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
          appErr = new AppError('INVALID_JSON');
          break;
        default:
          if (typeof fe.code === 'string' && /^(2[23][0-9A-Z]{3}|54000)$/.test(fe.code) && !fe.statusCode) {
            appErr = databaseRejection(fe.code);
          } else if (err instanceof SyntaxError || (fe.statusCode === 400 && /JSON/i.test(fe.message))) {
            appErr = new AppError('INVALID_JSON');
          } else if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
            return reply.status(fe.statusCode).send({ errors: [fe.message], errorCode: 'GH-10001' });
          } else if (fe.statusCode === 503) {
            appErr = new AppError('SHUTTING_DOWN');
          } else {
            req.log.error({ err }, 'unhandled error');
            appErr = new AppError('INTERNAL');
          }
      }
    }
    if (appErr.status >= 500 && appErr.code !== 'INTERNAL') req.log.warn({ code: appErr.code }, appErr.message);
    if (appErr.headers) reply.headers(appErr.headers);
    return reply.status(appErr.status).send(errorBody(appErr));
  });

  app.setNotFoundHandler((req, reply) => {
    const e = new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`);
    return sendOutsideRoute(req, reply, e);
  });
}
