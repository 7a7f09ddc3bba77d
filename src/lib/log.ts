import pino, { type Logger } from 'pino';

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

/** The process logger (server and agent alike): JSON lines, secrets redacted. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: LOG_REDACT, censor: '[redacted]' } });
}
