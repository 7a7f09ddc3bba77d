import type { Queryable } from '../../storage/db.ts';
import { createDomainRestrictionsService } from './domain.service.ts';
import { createIpRestrictionsService, type IpRestrictionsDeps } from './ip.service.ts';
import { createIpBulk } from './ip-bulk.ts';
import { forgetAccount } from './store.ts';

export { restrictionsRoutes } from './routes.ts';
export {
  domainAllowed,
  assertEmailDomainAllowed,
  domainVerdict,
  normalizeDomain,
  type DomainRestrictionsService,
} from './domain.service.ts';
export type { IpRestrictionsService } from './ip.service.ts';
export type { IpBulk } from './ip-bulk.ts';

/** IP restrictions (per account) and email-domain restrictions (environment and per account). */
export function createRestrictions(deps: IpRestrictionsDeps) {
  const ip = createIpRestrictionsService(deps);
  return {
    ip,
    /** POST .../restrictions/ip/bulk: many rules in one transaction (ip-bulk.ts). */
    ipBulk: createIpBulk({ ...deps, ip }),
    domains: createDomainRestrictionsService(deps),
    /** On account.removed: the account's IP and domain rules and configurations. */
    forgetAccount: async (q: Queryable, tenantId: string) => {
      await forgetAccount(q, tenantId);
      ip.forget(tenantId);
    },
  };
}
export type Restrictions = ReturnType<typeof createRestrictions>;
