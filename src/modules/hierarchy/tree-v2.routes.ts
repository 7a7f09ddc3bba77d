import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import type { HierarchyService } from './service.ts';
import type { Viewer } from './tree-v2.ts';
import { HierarchyNodeV2MetadataSchema, HierarchyNodeV2Schema, type HierarchyNodeV2 } from './tree-v2.schema.ts';

const V2 = '/tenants/resources/hierarchy/v2';
const READ = 'fe.account-hierarchy.read.subaccount';
const tags = ['hierarchy'];

/** Account machine tokens act as their account; user tokens (also a user's API or access token) act as the user. */
const ACCOUNT_TOKENS = new Set(['tenantApiToken', 'tenantAccessToken']);

function viewerOf(req: FastifyRequest): Viewer {
  const auth = req.auth!;
  if (auth.kind === 'vendor') return { kind: 'vendor' };
  if (auth.actor && ACCOUNT_TOKENS.has(auth.actor.type)) return { kind: 'account' };
  return { kind: 'user', userId: auth.userId };
}

/**
 * GET /tenants/resources/hierarchy/v2 and /v2/metadata (user or environment token): the calling account (the user
 * token's account, or the tenant header's) with the sub-accounts the caller reaches, as nested nodes; /metadata adds
 * each account's metadata. A scope of its own for the self-referencing schemas (see the tree route in routes.ts).
 */
export const treeV2Routes: FastifyPluginAsyncTypebox<{ hierarchy: HierarchyService }> = async (app, { hierarchy }) => {
  app.addSchema(HierarchyNodeV2Schema);
  app.addSchema(HierarchyNodeV2MetadataSchema);
  const field = (req: FastifyRequest) => (req.auth?.kind === 'vendor' ? 'gatehouse-tenant-id' : 'tenantId');
  const ref = (id: string) => Type.Unsafe<HierarchyNodeV2>(Type.Ref(`${id}#`));

  app.get(
    V2,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary:
          'The account and the sub-accounts the caller reaches, as nested nodes (a user: those their memberships open)',
        response: { 200: ref(HierarchyNodeV2Schema.$id) },
      },
    },
    async (req) => hierarchy.treeV2(accountOf(req), viewerOf(req), { metadata: false, field: field(req) }),
  );

  app.get(
    `${V2}/metadata`,
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: "The account tree of /hierarchy/v2 with each account's metadata (stringified JSON object)",
        response: { 200: ref(HierarchyNodeV2MetadataSchema.$id) },
      },
    },
    async (req) => hierarchy.treeV2(accountOf(req), viewerOf(req), { metadata: true, field: field(req) }),
  );
};
