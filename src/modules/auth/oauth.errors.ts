import type { FastifyError, FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { describeValidation } from '../../http/error-handler.ts';
import { AppError } from '../../http/errors.ts';

/** The RFC 6749 section 5.2 error codes (plus OIDC's login_required and the 5xx ones) that the /oauth routes answer. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'login_required'
  | 'temporarily_unavailable'
  | 'server_error';

/** The body of every /oauth failure (wire.md section 2): `{error, error_description}`, never the platform error body. */
export const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) });

/** A failure of an /oauth route in RFC 6749 terms. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    message: string,
    readonly status = error === 'invalid_client' || error === 'login_required' ? 401 : 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Platform error codes that mean "the grant (refresh token, session) is not good": invalid_grant. */
const GRANT_CODES = new Set(['INVALID_REFRESH_TOKEN', 'SESSION_REVOKED', 'USER_LOCKED', 'NO_ACCOUNT_ACCESS']);
/** Platform error codes that mean "the client authenticated, but may not use this grant": unauthorized_client. */
const CLIENT_REFUSED = new Set(['API_TOKENS_DISABLED', 'IP_RESTRICTED', 'API_TOKEN_EXPIRED', 'MACHINE_TOKEN_REVOKED']);

/** Maps what a service or Fastify threw to the RFC 6749 error (the platform's messages are kept as descriptions). */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof AppError) {
    if (GRANT_CODES.has(err.code)) return new OAuthError('invalid_grant', err.message);
    if (err.code === 'BAD_CREDENTIALS') return new OAuthError('invalid_client', err.message);
    if (CLIENT_REFUSED.has(err.code)) return new OAuthError('unauthorized_client', err.message);
    if (err.status === 429) return new OAuthError('temporarily_unavailable', err.message, 429, err.headers);
    if (err.status >= 500)
      return new OAuthError(
        err.status === 503 ? 'temporarily_unavailable' : 'server_error',
        err.message,
        err.status,
        err.headers,
      );
    // Anything else a client sent wrong (validation, bad JSON, media type, a redirect outside the allow-list, ...).
    return new OAuthError('invalid_request', err.message, err.status === 413 || err.status === 415 ? err.status : 400);
  }
  const fe = err as FastifyError;
  if (fe?.validation)
    return new OAuthError(
      'invalid_request',
      describeValidation(fe.validationContext, fe.validation as never).join('; '),
    );
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new OAuthError('invalid_request', 'Request body is too large', 413);
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new OAuthError(
      'invalid_request',
      'Request body must be application/x-www-form-urlencoded or application/json',
      415,
    );
  if (err instanceof SyntaxError || (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500))
    return new OAuthError(
      'invalid_request',
      fe.statusCode === 400 && /JSON/i.test(fe.message) ? 'Request body is not valid JSON' : fe.message,
    );
  return new OAuthError('server_error', 'Internal server error', 500);
}

/**
 * The error handler of the encapsulated /oauth plugin: every failure answers `{error, error_description}` with
 * `Cache-Control: no-store` (RFC 6749 section 5.2), never the platform error body.
 */
export function installOAuthErrors(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => {
    const e = toOAuthError(err);
    if (e.error === 'server_error' && e.status === 500) req.log.error({ err }, 'unhandled error');
    return reply
      .status(e.status)
      .headers({ ...e.headers, 'cache-control': 'no-store', pragma: 'no-cache' })
      .send({ error: e.error, error_description: e.message });
  });
}
