import type { Config } from '../../config.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { ResetTokenStore } from '../auth/index.ts';
import type { LimitsService } from '../limits/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import { createRecoveryCodes } from './codes.ts';
import { createResetService } from './reset.service.ts';
import { createVerificationService } from './verification.service.ts';
import { createPhonesService } from './phones.service.ts';
import * as store from './store.ts';

export { recoveryRoutes } from './routes.ts';
export { RESET_LINK_TTL, RESET_SMS_CODE_TTL, type ResetService } from './reset.service.ts';
export type { VerificationService } from './verification.service.ts';
export { phoneNumbersRoutes } from './phones.routes.ts';
export type { PhonesService } from './phones.service.ts';
export { recoveryPurgeRules } from './purge.ts';

/** Password reset and email verification, over messaging. */
export function createRecovery(deps: {
  db: Db;
  kek: Buffer;
  config: Config;
  passwords: PasswordService;
  messaging: MessagingService;
  events: EventsService;
  endSessions: (userId: string) => Promise<unknown>;
  /** The shared rate-limit store the reset, verification and phone-code sends count in. */
  limits: LimitsService;
}) {
  const codes = createRecoveryCodes(deps.kek);
  const { perIp, perIdentifier, windowSeconds } = deps.config.codeRateLimit;
  const reset = createResetService({
    db: deps.db,
    passwords: deps.passwords,
    messaging: deps.messaging,
    events: deps.events,
    codes,
    publicUrl: deps.config.publicUrl,
    endSessions: deps.endSessions,
    limits: {
      perIp: deps.limits.limiter('reset:ip', { limit: perIp, windowSeconds }),
      perIdentifier: deps.limits.limiter('reset:id', { limit: perIdentifier, windowSeconds }),
    },
  });
  const verification = createVerificationService({
    db: deps.db,
    messaging: deps.messaging,
    events: deps.events,
    codes,
    endSessions: deps.endSessions,
    limits: { perIdentifier: deps.limits.limiter('verify:id', { limit: perIdentifier, windowSeconds }) },
  });
  // Phone numbers of users (routes.md "SMS"): own limiter instances, same settings as the other code flows.
  const phones = createPhonesService({
    db: deps.db,
    kek: deps.kek,
    messaging: deps.messaging,
    events: deps.events,
    limits: {
      perIp: deps.limits.limiter('phones:ip', { limit: perIp, windowSeconds }),
      perIdentifier: deps.limits.limiter('phones:id', { limit: perIdentifier, windowSeconds }),
    },
  });
  /** For the users module's email change (registered by the composition root): emailed proofs die with the address. */
  const forgetEmailProofs = (q: Queryable, userId: string): Promise<void> => store.forgetEmailProofs(q, userId);
  /** For the sign-in's reset answer (auth, registered by the composition root): a token the reset route redeems. */
  const storeResetToken: ResetTokenStore = (q, t) => store.insertResetToken(q, t);
  return { reset, verification, phones, forgetEmailProofs, storeResetToken };
}
export type Recovery = ReturnType<typeof createRecovery>;
