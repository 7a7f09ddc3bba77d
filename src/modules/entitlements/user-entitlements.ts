import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { compile, type Decision, type Engine, type Snapshot, type SubjectContext } from './engine/index.ts';
import type { EntitlementsService } from './service.ts';

/** Account machine tokens act for their account: no user of theirs can hold a user grant. */
const ACCOUNT_TOKENS = new Set(['tenantApiToken', 'tenantAccessToken']);

/**
 * The vendor's evaluator input (UserEntitlementsContext of @frontegg/entitlements-javascript-commons): the client
 * decides from it. Features arrive already decided by the engine, so the client's direct evaluation gives the
 * agent's answer: `expireTime` -1 (no expiry) when entitled, 0 (in the past: BUNDLE_EXPIRED) when only an expired
 * grant exists, null when missing. Flags and plan targeting are not shipped (they were applied by the engine).
 */
interface FeatureEntry {
  planIds: string[];
  expireTime: number | null;
  linkedPermissions: string[];
}
export interface UserEntitlements {
  features: Record<string, FeatureEntry>;
  plans: Record<string, never>;
  permissions: Record<string, true>;
}

const expireTime = (d: Decision): number | null => (d.result ? -1 : d.justification === 'PLAN_EXPIRED' ? 0 : null);

/**
 * The caller's entitlements as the decision engine computes them over the current snapshot (the agent's answers):
 * every feature of the catalogue with the permissions it links, and the permission keys the caller holds. Compiled
 * once per snapshot (the service rebuilds the snapshot only when its offset moves).
 */
export function createUserEntitlements(e: Pick<EntitlementsService, 'snapshot'>) {
  const engines = new WeakMap<Snapshot, Engine>();
  return {
    async of(subject: SubjectContext): Promise<UserEntitlements> {
      const snap = await e.snapshot();
      let engine = engines.get(snap);
      if (!engine) engines.set(snap, (engine = compile(snap.data)));
      const now = Date.now();
      const features: Record<string, FeatureEntry> = {};
      for (const [, key, linked] of snap.data.features ?? []) {
        const d = engine.decide('feature', { subjectContext: subject, requestContext: { featureKey: key } }, now);
        features[key] = { planIds: [], expireTime: expireTime(d), linkedPermissions: [...(linked ?? [])] };
      }
      const permissions: Record<string, true> = {};
      for (const key of [...new Set(subject.permissions)].sort()) permissions[key] = true;
      return { features, plans: {}, permissions };
    },
  };
}

const Feature = Type.Object({
  planIds: Type.Array(Type.String()),
  expireTime: Type.Union([Type.Number(), Type.Null()], {
    description: '-1: entitled, no expiry; 0: expired; null: missing',
  }),
  linkedPermissions: Type.Array(Type.String()),
});
const UserEntitlementsContext = Type.Object({
  features: Type.Record(Type.String(), Feature),
  plans: Type.Object({}, { description: 'always empty: plan targeting is applied by the engine' }),
  permissions: Type.Record(Type.String(), Type.Literal(true)),
});

/** GET /entitlements/api/v2/user-entitlements (user token) → the vendor evaluator's UserEntitlementsContext. */
export const userEntitlementsRoutes: FastifyPluginAsyncTypebox<{ entitlements: EntitlementsService }> = async (
  app,
  { entitlements },
) => {
  const svc = createUserEntitlements(entitlements);
  app.get(
    '/entitlements/api/v2/user-entitlements',
    {
      config: guard.user(),
      schema: {
        tags: ['entitlements'],
        summary:
          "The signed-in user's entitlements in the token's account, as the vendor's evaluator reads them: every feature " +
          'decided as the agent decides (with its linked permissions) and the permissions the token holds',
        response: { 200: UserEntitlementsContext },
      },
    },
    async (req) => {
      const auth = req.auth;
      if (auth?.kind !== 'user') throw new AppError('WRONG_TOKEN_KIND', 'This route accepts user tokens only');
      const userId = auth.actor && ACCOUNT_TOKENS.has(auth.actor.type) ? null : auth.userId;
      return svc.of({ tenantId: auth.tenantId, userId, permissions: auth.permissions, attributes: {} });
    },
  );
};
