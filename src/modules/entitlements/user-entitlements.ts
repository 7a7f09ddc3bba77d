import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { compile, type Decision, type Engine, type Snapshot, type SubjectContext } from './engine/index.ts';
import type { EntitlementsService } from './service.ts';

/** Account machine tokens act for their account: no user of theirs can hold a user grant. */
const ACCOUNT_TOKENS = new Set(['tenantApiToken', 'tenantAccessToken']);

type Entitlement = { isEntitled: boolean; justification?: string };
export interface UserEntitlements {
  features: Record<string, Entitlement>;
  permissions: Record<string, Entitlement>;
}

const entitlement = (d: Decision): Entitlement => (d.result ? { isEntitled: true } : { isEntitled: false, justification: d.justification });

/**
 * The caller's entitlements as the decision engine computes them over the current snapshot (the agent's answers):
 * every feature of the catalogue, and every permission the caller holds or a feature links. Compiled once per
 * snapshot (the service rebuilds the snapshot only when its offset moves).
 */
export function createUserEntitlements(e: Pick<EntitlementsService, 'snapshot'>) {
  const engines = new WeakMap<Snapshot, Engine>();
  return {
    async of(subject: SubjectContext): Promise<UserEntitlements> {
      const snap = await e.snapshot();
      let engine = engines.get(snap);
      if (!engine) engines.set(snap, (engine = compile(snap.data)));
      const now = Date.now();
      const features: Record<string, Entitlement> = {};
      const permissions: Record<string, Entitlement> = {};
      const permissionKeys = new Set(subject.permissions.filter((p) => !p.includes('*')));
      for (const [, key, linked] of snap.data.features ?? []) {
        features[key] = entitlement(engine.decide('feature', { subjectContext: subject, requestContext: { featureKey: key } }, now));
        for (const p of linked ?? []) permissionKeys.add(p);
      }
      for (const key of [...permissionKeys].sort()) {
        permissions[key] = entitlement(engine.decide('permission', { subjectContext: subject, requestContext: { permissionKey: key } }, now));
      }
      return { features, permissions };
    },
  };
}

const Entitled = Type.Object({ isEntitled: Type.Boolean(), justification: Type.Optional(Type.String()) });

/** GET /entitlements/api/v2/user-entitlements (user token) → {features: {key: {isEntitled, justification?}}, permissions: {…}}. */
export const userEntitlementsRoutes: FastifyPluginAsyncTypebox<{ entitlements: EntitlementsService }> = async (app, { entitlements }) => {
  const svc = createUserEntitlements(entitlements);
  app.get('/entitlements/api/v2/user-entitlements', {
    config: guard.user(),
    schema: {
      tags: ['entitlements'],
      summary: "The signed-in user's entitlements in the token's account: every feature and every held or feature-linked permission, decided as the agent decides",
      response: { 200: Type.Object({ features: Type.Record(Type.String(), Entitled), permissions: Type.Record(Type.String(), Entitled) }) },
    },
  }, async (req) => {
    const auth = req.auth;
    if (auth?.kind !== 'user') throw new AppError('WRONG_TOKEN_KIND', 'This route accepts user tokens only');
    const userId = auth.actor && ACCOUNT_TOKENS.has(auth.actor.type) ? null : auth.userId;
    return svc.of({ tenantId: auth.tenantId, userId, permissions: auth.permissions, attributes: {} });
  });
};
