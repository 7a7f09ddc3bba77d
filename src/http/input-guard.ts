import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.ts';

/** Deepest nesting of objects and arrays a request body may have. Real bodies need a handful of levels. */
export const MAX_BODY_DEPTH = 64;

/**
 * What no route can store or should walk, refused for every route before validation: a body nested deeper than
 * MAX_BODY_DEPTH (recursive code further on — validation, serialising metadata for PostgreSQL — would run out of
 * stack and answer 500), and the NUL character in any string, key or query value (PostgreSQL text cannot hold it, so
 * the statement would fail with a 500 or, inside a streamed export, cut the answer off). One iterative walk, no
 * recursion of its own.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    check(req.query, 'querystring');
    if (req.body !== undefined && req.body !== null) check(req.body, 'body');
  });
}

function check(root: unknown, name: string): void {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: root, path: name, depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) throw nul(path);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH)
      throw new AppError('VALIDATION', `${name} is nested deeper than ${MAX_BODY_DEPTH} levels`, { fields: [name] });
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], path: `${path}.${i}`, depth: depth + 1 });
      continue;
    }
    for (const [k, child] of Object.entries(v)) {
      if (k.includes('\u0000')) throw nul(path);
      stack.push({ v: child, path: `${path}.${k}`, depth: depth + 1 });
    }
  }
}

const nul = (path: string) =>
  new AppError('VALIDATION', `${path} must not contain the NUL character (U+0000)`, { fields: [path] });
