import type { RateLimiter } from '../limits/index.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import type { LoginService, TokenIssuer } from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import { createCodeFlows } from './codes.ts';
import { createDeviceFlows } from './devices.ts';
import { createPolicyService } from './policy.ts';
import { createMfaCore } from './service.ts';
import { createSignInFlows } from './signin.ts';
import type { WebAuthnFactors } from './gate.ts';

export { mfaRoutes, actorOf } from './routes.ts';
export { rememberCookieName, ACR_MFA } from './service.ts';
export { totpCode, matchTotp, stepAt, qrDataUrl } from './totp.ts';
// For the login box (environment): which factors are offered, as SQL it embeds in its one statement.
export { MFA_FACTORS_SQL } from './lookups.ts';
export { mfaPurgeRules } from './purge.ts';
export type { Actor } from './devices.ts';
export type { Finished } from './service.ts';
export { webauthnTypes, type WebAuthnDevice, type WebAuthnFactors } from './gate.ts';

/**
 * Multi-factor authentication: policy and configuration, the sign-in gate `mfa`, second-factor verification, and
 * self-service factors. The gate (`core.gate`) and the `acr` claim (`core.acr`) are given to auth by src/context.ts.
 */
export function createMfaService(deps: {
  db: Db;
  kek: Buffer;
  login: LoginService;
  issue: TokenIssuer;
  passwords: PasswordService;
  events: EventsService;
  requireAccount: (q: Queryable, tenantId: string) => Promise<unknown>;
  /** Cross-instance invalidation of the sign-in's cached MFA settings (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
  /** Delivery of SMS and email codes. */
  messaging: Pick<MessagingService, 'sendSms' | 'sendEmail'>;
  /** The webauthn module's credentials (src/context.ts): a second factor the challenge lists and removals count. */
  webauthn?: WebAuthnFactors;
  limits?: {
    perIp?: number;
    perUser?: number;
    windowSeconds?: number;
  };
  /** Code sends per user (SMS and email), counted in the shared rate-limit store: the SMS bill is the fleet's. */
  sends: RateLimiter;
}) {
  const policy = createPolicyService({
    db: deps.db,
    requireAccount: deps.requireAccount,
    invalidation: deps.invalidation,
  });
  const core = createMfaCore({ ...deps, policy });
  const devices = createDeviceFlows({ db: deps.db, core });
  return {
    policy,
    core,
    signin: createSignInFlows({ db: deps.db, core }),
    devices,
    codes: createCodeFlows({ db: deps.db, core, devices, messaging: deps.messaging }),
    forgetAccount: policy.forgetAccount,
  };
}
export type MfaService = ReturnType<typeof createMfaService>;
