import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Two validators: bodies are checked strictly (no type coercion: a number where a string belongs is a 400), while
 * query strings, params and headers are coerced from their text form. Unknown body fields are dropped, not stored.
 */
export function installValidation(app: FastifyInstance): void {
  const base: Options = { allErrors: false, useDefaults: true, removeAdditional: true, strict: false };
  const strict = addFormats.default(new Ajv.default({ ...base, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv.default({ ...base, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
