import pino, { type DestinationStream, type Logger } from 'pino';

/** Request fields and body keys that hold secrets; pino replaces them before a line is written. */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers["x-access-token"]',
  'req.headers.cookie',
  '*.password',
  '*.secret',
  '*.token',
  '*.apiKey',
];

/**
 * Query parameters whose values are secrets or one-time proofs (compared without case, `_` and `-`): tokens, codes,
 * OAuth/OIDC state and nonces, PKCE verifiers, SAML messages, passwords, signatures.
 */
const SECRET_PARAM = new RegExp(
  '(token|secret|password|passwd|passcode|otp|apikey|signature|assertion|verifier|nonce|samlresponse|samlrequest|' +
    'relaystate|credential|jwt)|(^|auth|verification|invitation|reset|activation|recovery|device|user)code$|' +
    '^(code|state|key|sig|ticket|hash|session|sid)$',
);

function isSecretParam(raw: string): boolean {
  let name = raw;
  try {
    name = decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    /* a malformed escape: judge the raw name */
  }
  return SECRET_PARAM.test(name.toLowerCase().replace(/[_\-\s]/g, ''));
}

/** The URL with the values of secret query parameters replaced by [REDACTED]; the path and other parameters stay. */
export function redactUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && isSecretParam(name) ? `${name}=[REDACTED]` : pair;
    });
  return `${url.slice(0, q)}?${query.join('&')}`;
}

/**
 * The request as Fastify logs it, with the query's secrets redacted. Pino serializers apply by key, so the `url` and
 * `originalUrl` Fastify logs when it rewrites a URL are redacted too.
 */
const serializers = {
  req(req: {
    method?: string;
    url?: string;
    headers?: Record<string, unknown>;
    host?: string;
    ip?: string;
    socket?: { remotePort?: number };
  }) {
    return {
      method: req.method,
      url: redactUrl(req.url),
      version: req.headers?.['accept-version'],
      host: req.host,
      remoteAddress: req.ip,
      remotePort: req.socket?.remotePort,
    };
  },
  url: redactUrl,
  originalUrl: redactUrl,
};

/** The process logger (server and agent alike): JSON lines, secrets redacted; `destination` defaults to stdout. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: LOG_REDACT, censor: '[redacted]' }, serializers };
  return destination ? pino(options, destination) : pino(options);
}
