import type { Db } from '../../storage/db.ts';
import { createCatalogService } from './catalog.service.ts';
import { createGrantsService } from './grants.service.ts';
import type { EntitlementsDeps } from './records.ts';
import { createRouteRulesService } from './routes.service.ts';
import { buildSnapshot, createServerDecisions, snapshotOffset } from './snapshot.ts';

export type EntitlementsService = ReturnType<typeof createEntitlementsService>;

/** The entitlements module: management (catalog, grants, route rules), the snapshot and server-side decisions. */
export function createEntitlementsService(deps: EntitlementsDeps) {
  const grants = createGrantsService(deps);
  return {
    catalog: createCatalogService(deps),
    grants,
    routes: createRouteRulesService(deps),
    decisions: createServerDecisions(deps.db),
    snapshot: () => buildSnapshot(deps.db),
    snapshotOffset: () => snapshotOffset(deps.db),
    forgetAccount: (tx: Db, tenantId: string) => grants.forgetAccount(tx, tenantId),
    assignSignupPlans: (tx: Db, tenantIds: string[]) => grants.assignSignupPlans(tx, tenantIds),
  };
}
