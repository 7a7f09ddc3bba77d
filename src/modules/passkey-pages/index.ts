import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addScriptAsset } from '../../http/pages/kit.ts';
import { actorOf, isRecent, type PasskeyFactor } from '../account-pages/index.ts';
import type { BrowserSession } from '../auth/index.ts';
import type { WebAuthnService } from '../webauthn/index.ts';
import { assertionOf } from './deps.ts';
import { loginButton, meSection, mfaForm, SCRIPT } from './views.ts';

export { passkeyPagesRoutes } from './routes.ts';
export type { PasskeyPagesDeps } from './deps.ts';

addScriptAsset(SCRIPT, readFileSync(new URL(`./${SCRIPT}`, import.meta.url), 'utf8'));

/**
 * The passkey parts the sign-in and account pages show (src/routes.ts passes them in): the button of /account/login,
 * the "Passkeys" section of /account/me, and the passkey factor of /account/mfa.
 */
export function passkeySlots(deps: { webauthn: WebAuthnService; recentAuthMaxAge: number }) {
  const { webauthn } = deps;
  const scripts = [SCRIPT];
  const mfa: PasskeyFactor = {
    form: mfaForm,
    verify: (b, client) =>
      webauthn.signin.verify(
        b.deviceId,
        {
          webauthnToken: b.webauthnToken,
          options: assertionOf(b.response),
          mfaToken: b.mfaToken,
          rememberDevice: b.rememberDevice,
        },
        client,
      ),
  };
  return {
    scripts,
    login: { render: loginButton, scripts },
    me: async (_req: FastifyRequest, reply: FastifyReply, s: BrowserSession) => {
      const { devices } = await webauthn.devices.list(actorOf(s));
      return meSection(reply, devices, isRecent(deps, s));
    },
    mfa,
  };
}
