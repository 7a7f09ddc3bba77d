import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { IMPERSONATION_PERMISSION, type DelegationService } from './delegation.service.ts';
import * as S from './schema.ts';

const TAGS = ['delegation'];

export const delegationRoutes: FastifyPluginAsyncTypebox<{ delegation: DelegationService }> = async (
  app,
  { delegation },
) => {
  app.get(
    '/identity/resources/configurations/v1/delegation',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: 'Whether API tokens may act on behalf of users',
        response: { 200: S.DelegationConfig },
      },
    },
    async () => delegation.config(),
  );

  app.post(
    '/identity/resources/configurations/v1/delegation',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: 'Turn delegation on or off',
        body: S.UpdateDelegationConfig,
        response: { 200: S.DelegationConfig },
      },
    },
    async (req) => delegation.setConfig(req.body.enabled),
  );

  app.post(
    '/identity/resources/auth/v1/delegation/token',
    {
      config: guard.user(),
      schema: {
        tags: TAGS,
        summary: 'An account API token obtains a user token acting on behalf of a user of its account (act claim)',
        body: S.DelegateBody,
        response: { 200: S.DelegatedToken },
      },
    },
    async (req) =>
      delegation.delegate(req.auth as Extract<typeof req.auth, { kind: 'user' }> & object, req.body.userId),
  );

  app.post(
    '/identity/resources/impersonation/v1',
    {
      config: guard.any(IMPERSONATION_PERMISSION),
      schema: {
        tags: TAGS,
        summary: 'Impersonate a user (vendor, or an admin holding fe.secure.impersonate.users); recorded',
        body: S.ImpersonateBody,
        response: { 200: S.Impersonated },
      },
    },
    async (req) => delegation.impersonate(req.auth!, req.body, tenantHeader(req), { ip: req.ip }),
  );

  app.get(
    '/identity/resources/impersonation/v1',
    {
      config: guard.vendor,
      schema: {
        tags: TAGS,
        summary: 'Recorded impersonations and delegations, newest first (tenant header narrows to one account)',
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
        response: { 200: Type.Array(S.TokenAct) },
      },
    },
    async (req) => delegation.listActs(tenantHeader(req), req.query.limit),
  );
};
