import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

const BASE: Options = { allErrors: false, useDefaults: true, removeAdditional: true, strict: false };

/**
 * Two validators: bodies are checked strictly (no type coercion: a number where a string belongs is a 400), while
 * query strings, params and headers are coerced from their text form. Unknown body fields are dropped, not stored.
 * Installed as the schema controller's validator factory, so a plugin that adds shared schemas (`addSchema`) gets
 * the same two validators rather than Fastify's default coercing one.
 */
export const schemaController = {
  compilersFactory: {
    buildValidator(externalSchemas: unknown): FastifySchemaCompiler<unknown> {
      const strict = addFormats.default(new Ajv.default({ ...BASE, coerceTypes: false }));
      const coercing = addFormats.default(new Ajv.default({ ...BASE, coerceTypes: 'array' }));
      for (const schema of Object.values((externalSchemas ?? {}) as Record<string, object>)) {
        strict.addSchema(schema);
        coercing.addSchema(schema);
      }
      return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
    },
  },
} as unknown as FastifyServerOptions['schemaController'];

export function installValidation(app: FastifyInstance): void {
  // A request without a body is validated as an empty object, so an optional body may be left out and a required
  // field is reported by name ("body.x is required") rather than as "body must be object".
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && req.routeOptions.schema?.body) req.body = {};
  });
}
