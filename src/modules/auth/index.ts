import type { Config } from '../../config.ts';
import type { Db } from '../../storage/db.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { UsersService } from '../users/index.ts';
import type { EventsService } from '../events/index.ts';
import type { ClaimSource, RoleSource, TokenTemplateSource } from './tokens.ts';
import { createLiveness, type ActCheck } from './liveness.ts';
import type { GateSpec, InviteJoin, ResetTokenStore } from './sign-in.types.ts';
import type { StepUpFactor } from './step-up.service.ts';
import { createLoginService } from './login.service.ts';
import type { LimitsService } from '../limits/index.ts';
import { createSessionsService } from './sessions.service.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createTokenIssuer } from './tokens.ts';

export { authRoutes } from './routes.ts';
export type { OidcHandoff } from './oauth.routes.ts';
export { REFRESH_COOKIE, refreshCookie } from './refresh-cookie.ts';
export type { BrowserSession } from './browser-session.ts';
/** The sign-in answer schema (wire.md section 4, with the MFA challenge fields) for every route that signs in. */
export { LoginResponse as SignInAnswer, MfaDevices, type SignInAnswerBody } from './schema.ts';
export type { LoginService } from './login.service.ts';
export type {
  SignInGate,
  GateInput,
  GateSpec,
  InviteJoin,
  ResetTokenStore,
  SignInOptions,
  ClientInfo,
} from './sign-in.types.ts';
export type { StepUpFactor } from './step-up.service.ts';
export type { TokenIssuer, RoleSource, ClaimSource, LoginResponse, TokenTemplateSource } from './tokens.ts';
export type { SessionsService } from './sessions.service.ts';
export { createRateLimiter, type RateLimiter } from './rate-limit.ts';
export { LIVENESS_CACHE_MS, type Liveness, type ActCheck } from './liveness.ts';
export { authPurgeRules } from './purge.ts';
export { SESSIONS_SQL } from './sessions.sql.ts';

/** Sign-in, sessions and token issuing, wired over their dependencies. */
export function createAuth(deps: {
  db: Db;
  config: Config;
  keys: KeysService;
  /** The shared rate-limit store the sign-in limits count in. */
  limits: LimitsService;
  environment: EnvironmentService;
  roles: RolesService;
  users: UsersService;
  passwords: PasswordService;
  tenants: TenantsService;
  events?: EventsService;
  /** Further roles of a user in an account (groups), added to the role claims. */
  roleSources?: RoleSource[];
  /** Further claims of a user's access token (MFA's `acr`, impersonation's `act`), in this order. */
  claimSources?: ClaimSource[];
  /** The JWT template of a user access token (the jwt-templates module's targeting rules). */
  tokenTemplate?: TokenTemplateSource;
  /** The sign-in gates, in the order they run (GateSpec). */
  gates?: GateSpec[];
  /** A password sign-in's `invitationToken`: joins the token's account (the invitations module's invite tokens). */
  inviteJoin?: InviteJoin;
  /** The step-up's `{code}`: a code of the user's authenticator app (the MFA module's). */
  stepUpFactor?: StepUpFactor;
  /** Where the sign-in's reset answer (a migrated user without a usable password, an expired one) stores its token. */
  resetTokens: ResetTokenStore;
  /** Whether an act (impersonation, delegation) is live (the api-tokens module's token_acts). */
  acts?: ActCheck;
  /** Cross-instance invalidation of the session-policy cache (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}) {
  const sessions = createSessionsService({
    db: deps.db,
    environment: deps.environment,
    tenants: deps.tenants,
    invalidation: deps.invalidation,
  });
  const issue = createTokenIssuer({
    keys: deps.keys,
    roles: deps.roles,
    environment: deps.environment,
    roleSources: deps.roleSources,
    claimSources: deps.claimSources,
    template: deps.tokenTemplate,
  });
  const { perIp, perIdentifier, perIpIdentifier, floodPerIp, windowSeconds } = deps.config.loginRateLimit;
  const login = createLoginService({
    db: deps.db,
    users: deps.users,
    passwords: deps.passwords,
    environment: deps.environment,
    sessions,
    issue,
    limits: {
      store: deps.limits,
      rules: {
        failuresPerIdentifier: { limit: perIdentifier, windowSeconds },
        failuresPerIpIdentifier: { limit: perIpIdentifier, windowSeconds },
        failuresPerIp: { limit: perIp, windowSeconds },
        attemptsPerIp: { limit: floodPerIp, windowSeconds },
      },
    },
    events: deps.events,
    issuer: deps.config.publicUrl,
    gates: deps.gates,
    inviteJoin: deps.inviteJoin,
    stepUpFactor: deps.stepUpFactor,
    resetTokens: deps.resetTokens,
  });
  // Whether a user token's session and membership are still live (checked by the guard for every user-token route).
  const liveness = createLiveness({ db: deps.db, users: deps.users, acts: deps.acts });
  deps.events?.onEvent((key) => liveness.observe(key));
  return { login, sessions, issue, liveness };
}
