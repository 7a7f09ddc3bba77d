import type { Db } from '../../storage/db.ts';
import type { LoginService } from '../auth/index.ts';
import type { Actor, MfaService } from '../mfa/index.ts';
import type { AssertionBody, Party } from './ceremony.ts';
import { createKit } from './kit.ts';
import { createDeviceFlows, type NewDeviceBody } from './service.ts';
import { createSignInFlows } from './signin.ts';

export { webauthnRoutes } from './routes.ts';
export { webauthnFactors } from './factors.ts';
export { webauthnPurgeRules } from './purge.ts';
export type { Party } from './ceremony.ts';
export type { PasskeyProof } from './signin.ts';
/** The browser answers as the API validates them (the hosted pages check a form's JSON against them). */
export { Assertion, NewCredential } from './schema.ts';

/**
 * WebAuthn (passkeys): the users' public-key credentials, their registration, their use as a second factor of a
 * sign-in (finished by the mfa module's completion path) and as the first factor (discoverable credentials).
 */
export function createWebAuthnService(deps: {
  db: Db;
  kek: Buffer;
  party: Party;
  mfa: MfaService;
  login: LoginService;
}) {
  const kit = createKit({ db: deps.db, party: deps.party, mfa: deps.mfa });
  const devices = createDeviceFlows({ db: deps.db, kit });
  const signin = createSignInFlows({ db: deps.db, kit, login: deps.login, kek: deps.kek });
  return {
    devices,
    signin,
    /** For the hosted pages (no HTTP round trip): registering a device of a signed-in user, and passkey sign-in. */
    pages: {
      registrationOptions: (userId: string) => devices.registrationOptions(self(userId)),
      register: (userId: string, body: NewDeviceBody) => devices.registerDevice(self(userId), body),
      signInOptions: (email?: string) => signin.prelogin({ email }),
      /** Verifies the assertion and answers the user, the amr and the gates it satisfies (no session started). */
      verifySignIn: (body: AssertionBody, client: { ip?: string; userAgent?: string }) =>
        signin.verifyPasskey(body, client),
    },
  };
}
export type WebAuthnService = ReturnType<typeof createWebAuthnService>;

const self = (userId: string): Actor => ({ userId, admin: false });
