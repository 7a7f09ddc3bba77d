import type { Logger } from 'pino';
import type { AuthContext } from '../../http/auth.ts';
import type { EventsService } from '../events/index.ts';
import { createAccessTokensService } from './access.service.ts';
import { createDelegationService } from './delegation.service.ts';
import { createApiTokensService, type MachineDeps } from './service.ts';

export { apiTokensRoutes } from './routes.ts';
export { delegationRoutes } from './delegation.routes.ts';
export { MAX_REFRESH_TOKENS, type ApiTokensService } from './service.ts';
export type { AccessTokensService } from './access.service.ts';
export type { DelegationService } from './delegation.service.ts';
// For the sign-in (auth, through the composition root): act liveness and the impersonation's `act` claim.
export { actLive, impersonationClaims } from './lookups.ts';

/**
 * Machine access: API tokens, access tokens, delegation and impersonation, with the verifiers of their
 * JWT types for the guard (`tokenTypes`) and what goes when an account is removed (`forgetAccount`).
 */
export function createMachineAccess(deps: MachineDeps & { events: EventsService; log: Logger }) {
  const apiTokens = createApiTokensService(deps);
  const accessTokens = createAccessTokensService(deps);
  const delegation = createDelegationService(deps);
  const tokenTypes: [string, (claims: Record<string, unknown>) => Promise<AuthContext>][] = [
    ['tenantApiToken', (c) => apiTokens.authContext(c)],
    ['userApiToken', (c) => apiTokens.authContext(c)],
    ['tenantAccessToken', (c) => accessTokens.authContext(c)],
    ['userAccessToken', (c) => accessTokens.authContext(c)],
  ];
  return { apiTokens, accessTokens, delegation, tokenTypes, forgetAccount: apiTokens.forgetAccount };
}
export type MachineAccess = ReturnType<typeof createMachineAccess>;
