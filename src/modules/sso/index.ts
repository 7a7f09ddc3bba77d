import type { Db, Queryable } from '../../storage/db.ts';
import type { LoginService } from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { EventsService } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { createSsoConfigService } from './config.service.ts';
import type { TxtResolver } from './domains.service.ts';
import { createSsoLoginService } from './login.service.ts';
import { forgetAccount } from './store.ts';

export { ssoRoutes, acceptForms, refreshCookie } from './routes.ts';
export { flowSecrets, saveFlow, takeFlow, pkceChallenge, FLOW_TTL_SECONDS } from './flow.ts';
export { provisionIntoAccount, type IdpIdentity } from './provision.ts';
export type { SsoConfigService } from './config.service.ts';
export { TXT_PREFIX, type TxtResolver } from './domains.service.ts';
// For the login box (environment): whether SSO is offered, as SQL it embeds in its one statement.
export { SSO_OFFERED_SQL } from './lookups.ts';
export type { SsoLoginService } from './login.service.ts';
export { ssoPurgeRules } from './purge.ts';

export interface SsoDeps {
  db: Db;
  kek: Buffer;
  publicUrl: string;
  environment: EnvironmentService;
  roles: RolesService;
  tenants: TenantsService;
  events: EventsService;
  login: LoginService;
  resolveTxt?: TxtResolver;
  domainCheck?: (q: Queryable, tenantId: string, email: string) => Promise<void>;
  /** OUTBOUND_ALLOW_PRIVATE_NETWORKS: metadata URLs and OIDC issuers may be private addresses. */
  allowPrivateNetworks?: boolean;
}

/** SSO per account (SAML 2.0 and OIDC), wired over its dependencies. */
export function createSso(deps: SsoDeps) {
  const configs = createSsoConfigService(deps);
  const login = createSsoLoginService({ ...deps, configs });
  return {
    configs,
    login,
    /** account.removed: the account's connections, domains and flows go (subscribed in src/context.ts). */
    forgetAccount: (q: Queryable, tenantId: string) => forgetAccount(q, tenantId),
  };
}
export type Sso = ReturnType<typeof createSso>;
