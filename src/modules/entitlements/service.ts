import type { Db } from '../../storage/db.ts';
import { createCatalogService } from './catalog.service.ts';
import { createGrantsService } from './grants.service.ts';
import type { EntitlementsDeps } from './records.ts';
import { createRouteRulesService } from './routes.service.ts';
import { createOpenApiImport } from './openapi-import.ts';
import { createRebacService } from './rebac.service.ts';
import { buildSnapshot, createServerDecisions, snapshotOffset } from './snapshot.ts';

export type EntitlementsService = ReturnType<typeof createEntitlementsService>;

/** The entitlements module: management (catalog, grants, route rules), the snapshot and server-side decisions. */
export function createEntitlementsService(deps: EntitlementsDeps) {
  const grants = createGrantsService(deps);
  // Every agent pulls the same snapshot after a change: build it once per offset (every write bumps the offset).
  let cached: Awaited<ReturnType<typeof buildSnapshot>> | undefined;
  async function snapshot() {
    if (cached && cached.snapshotOffset === (await snapshotOffset(deps.db))) return cached;
    cached = await buildSnapshot(deps.db);
    return cached;
  }
  return {
    catalog: createCatalogService(deps),
    grants,
    routes: createRouteRulesService(deps),
    importOpenApi: createOpenApiImport(deps.db),
    rebac: createRebacService(deps),
    decisions: createServerDecisions(deps.db),
    snapshot,
    snapshotOffset: () => snapshotOffset(deps.db),
    forgetAccount: (tx: Db, tenantId: string) => grants.forgetAccount(tx, tenantId),
    assignSignupPlans: (tx: Db, tenantIds: string[]) => grants.assignSignupPlans(tx, tenantIds),
  };
}
