import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { guard, tenantHeader } from '../../http/auth.ts';
import {
  CreateHistoryPolicy,
  CreateLockoutPolicy,
  HistoryPolicy,
  LockoutPolicy,
  PasswordConfig,
  PasswordConfigBody,
  PolicyHeaders,
  UpdateHistoryPolicy,
  UpdateLockoutPolicy,
  UserPasswordConfigQuery,
} from './schema.ts';
import type { PasswordService, Scope } from './service.ts';
import { rotationAndEmailRoutes } from './policies.routes.ts';

const tags = ['security policies'];
const CONFIG = '/identity/resources/configurations/v1';
export const READ_PERMISSION = 'fe.secure.read.securityPolicy';
export const WRITE_PERMISSION = 'fe.secure.write.securityPolicy';

/**
 * The scope a configuration call acts on: a user token its own account (any tenant header is ignored); an
 * environment token the account of the tenant header, or the environment level without one.
 */
export function scopeOf(req: FastifyRequest): Scope {
  if (req.auth?.kind === 'user') return req.auth.tenantId;
  return tenantHeader(req) ?? null;
}

const read = guard.any(READ_PERMISSION);
const write = guard.any(WRITE_PERMISSION);
const headers = PolicyHeaders;

export const securityPolicyRoutes: FastifyPluginAsyncTypebox<{ passwords: PasswordService }> = async (
  app,
  { passwords },
) => {
  // ---- password complexity ----
  app.get(
    `${CONFIG}/password`,
    {
      config: read,
      schema: {
        tags,
        summary:
          "Get the password policy that applies (the account's own, else the environment's, else the built-in default)",
        headers,
        response: { 200: PasswordConfig },
      },
    },
    async (req) => passwords.getPasswordConfig(scopeOf(req)),
  );

  app.post(
    `${CONFIG}/password`,
    {
      config: write,
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary:
          'Create or update the password policy of the environment or of one account; fields left out keep their value',
        headers,
        body: PasswordConfigBody,
        response: { 201: PasswordConfig },
      },
    },
    async (req, reply) => reply.status(201).send(await passwords.setPasswordConfig(scopeOf(req), req.body)),
  );

  app.get(
    '/identity/resources/users/v1/passwords/config',
    {
      config: guard.optional,
      schema: {
        tags,
        summary:
          'Get the strictest password configuration a user is subject to (no token needed; the account comes from a user token or the tenant header, else the environment)',
        headers,
        querystring: UserPasswordConfigQuery,
        response: { 200: PasswordConfig },
      },
    },
    async (req) => passwords.getPasswordConfig(scopeOf(req)),
  );

  // ---- password history ----
  const HISTORY = `${CONFIG}/password-history-policy`;
  app.get(
    HISTORY,
    {
      config: read,
      schema: {
        tags,
        summary:
          "Get the password history policy that applies (the account's own, else the environment's); 404 when none",
        headers,
        response: { 200: HistoryPolicy },
      },
    },
    async (req) => passwords.getHistoryPolicy(scopeOf(req)),
  );

  app.post(
    HISTORY,
    {
      config: write,
      schema: {
        tags,
        summary: 'Create the password history policy of the environment or of one account; 409 when it has one',
        headers,
        body: CreateHistoryPolicy,
        response: { 201: HistoryPolicy },
      },
    },
    async (req, reply) => reply.status(201).send(await passwords.createHistoryPolicy(scopeOf(req), req.body)),
  );

  app.patch(
    HISTORY,
    {
      config: write,
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary:
          'Update the password history policy of the environment or of one account; 404 when it has none of its own',
        headers,
        body: UpdateHistoryPolicy,
        response: { 200: HistoryPolicy },
      },
    },
    async (req) => passwords.updateHistoryPolicy(scopeOf(req), req.body),
  );

  app.get(
    `${HISTORY}/vendor`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get the environment-level password history policy; 404 when none',
        response: { 200: HistoryPolicy },
      },
    },
    async () => passwords.vendorHistoryPolicy(),
  );

  // ---- lockout ----
  const LOCKOUT = `${CONFIG}/lockout-policy`;
  app.get(
    LOCKOUT,
    {
      config: read,
      schema: {
        tags,
        summary: "Get the lockout policy that applies (the account's own, else the environment's)",
        headers,
        response: { 200: LockoutPolicy },
      },
    },
    async (req) => passwords.getLockout(scopeOf(req)),
  );

  app.post(
    LOCKOUT,
    {
      config: write,
      schema: {
        tags,
        summary: 'Create the lockout policy of the environment or of one account; 409 when it has one',
        headers,
        body: CreateLockoutPolicy,
        response: { 201: LockoutPolicy },
      },
    },
    async (req, reply) => reply.status(201).send(await passwords.createLockout(scopeOf(req), req.body)),
  );

  app.patch(
    LOCKOUT,
    {
      config: write,
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary: 'Update the lockout policy of the environment or of one account; 404 when it has none of its own',
        headers,
        body: UpdateLockoutPolicy,
        response: { 200: LockoutPolicy },
      },
    },
    async (req) => passwords.updateLockout(scopeOf(req), req.body),
  );

  app.get(
    `${LOCKOUT}/vendor`,
    {
      config: read,
      schema: { tags, summary: 'Get the environment-level lockout policy', response: { 200: LockoutPolicy } },
    },
    async () => passwords.vendorLockout(),
  );

  // ---- password rotation, user emails policy (policies.routes.ts) ----
  await app.register(rotationAndEmailRoutes, { passwords, read, write, scopeOf });
};
