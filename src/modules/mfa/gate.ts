import { readCookie } from '../../http/cookies.ts';
import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { GateInput } from '../auth/index.ts';
import type { PendingSignIns } from './pending.ts';
import type { PolicyService } from './policy.ts';
import * as store from './store.ts';
import type { ChallengeDevice, ConfigRow, DeviceRow } from './store.ts';

/** How long an mfaToken (the pending second step of a sign-in, inserted by the gate) lives. */
export const MFA_TOKEN_TTL_SECONDS = 600;

/** The remember-device cookie is per user (several users may share a browser). */
export const rememberCookieName = (userId: string) => `gh_mfa_${sha256Hex(userId).slice(0, 16)}`;

const maskPhone = (p: string) => `${p.slice(0, 3)}${'*'.repeat(Math.max(0, p.length - 5))}${p.slice(-2)}`;
const maskEmail = (e: string) => {
  const [name, domain] = e.split('@');
  return `${name.slice(0, 1)}${'*'.repeat(Math.max(1, name.length - 1))}@${domain}`;
};

/** A WebAuthn device as the challenge and the devices list show it (the webauthn module's credentials). */
export interface WebAuthnDevice {
  id: string;
  deviceType: 'Platform' | 'CrossPlatform';
  name: string;
}
/**
 * The user's WebAuthn credentials, which the webauthn module owns: src/context.ts passes its functions here, as that
 * module signs in through this one (a WebAuthn second factor finishes with `core.finish`).
 */
export interface WebAuthnFactors {
  devices(q: Queryable, userId: string, types: WebAuthnDevice['deviceType'][]): Promise<WebAuthnDevice[]>;
  /** Removes every credential of the user (recovery code, environment unenroll); answers how many. */
  removeAll(q: Queryable, userId: string): Promise<number>;
}
/** The WebAuthn device types whose strategy (WebAuthnPlatform, WebAuthnCrossPlatform) is active. */
export const webauthnTypes = (cfg: ConfigRow) =>
  [cfg.webauthn_platform_active && 'Platform', cfg.webauthn_cross_platform_active && 'CrossPlatform'].filter(
    (t): t is WebAuthnDevice['deviceType'] => Boolean(t),
  );

/** Whether a device's kind (authenticator or SMS) is active in the configuration. */
export const usable = (cfg: ConfigRow) => (d: Pick<DeviceRow, 'kind'>) =>
  d.kind === 'authenticator' ? cfg.authenticator_active : cfg.sms_active;

/** The user's devices as the sign-in challenge lists them: of the active kinds, phone numbers and email masked. */
export function devicesRecord(
  devs: ChallengeDevice[],
  cfg: ConfigRow,
  email?: string,
  webauthn: WebAuthnDevice[] = [],
) {
  return {
    webauthn,
    phones: devs
      .filter((d) => d.kind === 'sms' && cfg.sms_active)
      .map((d) => ({ id: d.id, phoneNumber: maskPhone(d.phone_number ?? '') })),
    authenticators: devs
      .filter((d) => d.kind === 'authenticator' && cfg.authenticator_active)
      .map((d) => ({ id: d.id })),
    emails: email && cfg.email_active ? [{ email: maskEmail(email) }] : [],
  };
}
const strategies = (cfg: ConfigRow) =>
  [
    cfg.authenticator_active && 'AuthenticatorApp',
    cfg.sms_active && 'SMS',
    cfg.email_active && 'EmailCode',
    cfg.webauthn_platform_active && 'WebAuthnPlatform',
    cfg.webauthn_cross_platform_active && 'WebAuthnCrossPlatform',
  ].filter((s): s is string => Boolean(s));

/**
 * The sign-in gate `mfa` (index.ts registers it on the login service): answers the MFA challenge when the policy and
 * the user's factors call for one. The configuration and policy come from the in-process cache; the devices are read
 * and the mfaToken inserted by one statement (store.challenge), except when a remember-device cookie must be checked
 * first. That statement also reads what the TOTP verify needs, kept in `pending` for it.
 */
export function createMfaGate(
  policy: Pick<PolicyService, 'signInSettings'>,
  pending: PendingSignIns,
  webauthn?: WebAuthnFactors,
) {
  return async function gate(q: Queryable, a: GateInput): Promise<void | Record<string, unknown>> {
    if (a.stage !== 'login') return;
    // The kinds of the user's verified devices, when the sign-in read them with the user (store.heldKindsSql).
    let held = Array.isArray(a.prefetched) ? (a.prefetched as string[]) : undefined;
    if (a.user.authenticator_mfa_secret_enc || a.user.phone_number_type === 'mfa') {
      // Adoption locks the user row: in a transaction of its own when the sign-in runs without one.
      await ('transaction' in q
        ? (q as Db).transaction((tx) => store.adoptMigrated(tx, a.user.id))
        : store.adoptMigrated(q, a.user.id));
      held = undefined;
    }
    const { config: cfg, policy: p } = await policy.signInSettings(q, a.tenantId);
    if (p.enforce === 'Off' || a.user.mfa_bypass) return;
    const forced =
      p.enforce === 'Force' || (p.enforce === 'ForceExceptSAML' && !a.amr.some((m) => m === 'saml' || m === 'sso'));
    // WebAuthn devices are read (one statement more) only while a WebAuthn strategy is active.
    const types = webauthnTypes(cfg);
    const wa = webauthn && types.length > 0 ? await webauthn.devices(q, a.user.id, types) : [];
    // Not forced and no device of an active kind: no challenge, and (prefetched) no statement.
    if (held && !forced && wa.length === 0 && !held.some((kind) => usable(cfg)({ kind: kind as DeviceRow['kind'] })))
      return;
    const mfaToken = randomSecret(32);
    const token = {
      hash: sha256Hex(mfaToken),
      userId: a.user.id,
      tenantId: a.tenantId,
      amr: a.amr,
      ttlSeconds: MFA_TOKEN_TTL_SECONDS,
    };
    const cookie = p.allowRemember ? readCookie(a.client.cookie, rememberCookieName(a.user.id)) : undefined;
    let devs: ChallengeDevice[];
    const answer = (devices: ChallengeDevice[]) => ({
      mfaRequired: true,
      mfaToken,
      mfaEnrolled: devices.length > 0 || wa.length > 0,
      mfaDevices: devicesRecord(devices, cfg, a.user.verified && a.user.email ? a.user.email : undefined, wa),
      mfaStrategies: strategies(cfg),
      allowRememberMyDevice: p.allowRemember,
      userId: a.user.id,
      userEmail: a.user.email,
      emailVerified: a.user.verified,
    });
    if (cookie) {
      devs = (await store.devices(q, a.user.id)).filter(usable(cfg));
      if (devs.length === 0 && wa.length === 0 && !forced) return;
      if (await store.isRemembered(q, a.user.id, sha256Hex(cookie), p.deviceExpirationSeconds)) return;
      await store.insertToken(q, token);
    } else {
      const kinds = [cfg.authenticator_active && ('authenticator' as const), cfg.sms_active && ('sms' as const)].filter(
        (k): k is DeviceRow['kind'] => Boolean(k),
      );
      // A user likely to be challenged: the request's audit entry of the challenge answer is stored by the same
      // statement (only if the token is inserted), so the answer costs no INSERT of its own.
      const entry =
        forced || wa.length > 0 || a.user.mfa_enrolled
          ? a.client.audit?.({ userId: a.user.id, mfaRequired: true })
          : undefined;
      // A flow that read the user's version and memberships with the user (password sign-in) gets a snapshot.
      const keep = a.version && a.memberships ? { version: a.version, memberships: a.memberships } : undefined;
      // A WebAuthn device calls for the challenge as a forcing policy does (the statement reads only mfa_devices).
      const challenged = forced || wa.length > 0;
      const r = await store.challenge(q, { ...token, kinds, forced: challenged, snapshot: keep !== undefined }, entry);
      if (!r.expiresAt) return;
      // What the TOTP verify would read back, as the sign-in read it (the user, its version, the memberships) and as
      // this statement read the authenticators: the verify of this instance may start from it (pending.ts).
      if (keep && r.authenticators.length > 0) {
        const t = {
          token_hash: token.hash,
          user_id: a.user.id,
          tenant_id: a.tenantId,
          amr: a.amr,
          failures: 0,
          expires_at: r.expiresAt,
        };
        pending.remember(token.hash, {
          view: { t, user: a.user, devices: r.authenticators, memberships: keep.memberships },
          version: keep.version,
        });
      }
      if (entry) (a.client.inlined ??= []).push(entry);
      devs = r.devices;
    }
    return answer(devs);
  };
}
