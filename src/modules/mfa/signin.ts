import { sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db } from '../../storage/db.ts';
import type { ClientInfo } from '../auth/index.ts';
import { findByEmail, isLockedNow } from '../users/index.ts';
import { MAX_WRONG_CODES_PER_TOKEN, type Finished, type MfaCore } from './service.ts';
import { webauthnTypes } from './gate.ts';
import type { PendingSignIn } from './pending.ts';
import * as store from './store.ts';

/** The sign-in routes of MFA: finish a pending sign-in with a second factor, enrol one when forced, recover. */
export function createSignInFlows(deps: { db: Db; core: MfaCore }) {
  const { db, core } = deps;

  /**
   * The TOTP verify from the challenge's snapshot (pending.ts; decision "MFA verify from the challenge's snapshot"):
   * when the code matches a device as the snapshot has it, the session starts in one statement whose guard
   * (store.snapshotSpendGuard) re-checks in the database what the snapshot could have missed. Undefined: the verify
   * takes its full path (a code the snapshot does not match, access the snapshot does not show, a guard that failed;
   * nothing was written then, and nothing was counted: the full path counts the attempt and judges the code again).
   */
  async function fromSnapshot(
    p: PendingSignIn,
    hash: string,
    body: { value: string; rememberDevice?: boolean },
    client: ClientInfo,
    deviceId?: string,
  ): Promise<Finished | undefined> {
    const { t, user } = p.view;
    const membership = p.view.memberships.find((m) => m.tenant_id === t.tenant_id && m.live);
    if (!membership || isLockedNow(user)) return undefined;
    const { config } = await core.signInSettings(db, t.tenant_id);
    if (!config.authenticator_active) return undefined;
    const m = core.matchDevice(
      deviceId === undefined ? p.view.devices : p.view.devices.filter((d) => d.id === deviceId),
      body.value,
    );
    if (m instanceof AppError) return undefined;
    core.limitUser(user.id);
    const guard = {
      deviceId: m.device.id,
      step: m.step,
      tokenHash: hash,
      maxAttempts: MAX_WRONG_CODES_PER_TOKEN,
      userId: user.id,
      version: p.version,
      tenantId: t.tenant_id,
      roleIds: membership.role_ids,
    };
    try {
      const f = await core.finish(db, t, user, 'otp', client, body.rememberDevice, p.view.memberships, (remember) =>
        store.snapshotSpendGuard(guard, remember),
      );
      for (const e of client.inlined ?? []) e.stored();
      return f;
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      if (
        err instanceof AppError ||
        [store.SPEND_STALE, store.SPEND_TOKEN_GONE, store.SPEND_REUSED].some((marker) => message.includes(marker))
      )
        return undefined;
      throw err;
    }
  }

  return {
    /**
     * TOTP code of an enrolled authenticator (any of the user's, or `deviceId`). From the challenge's snapshot when
     * this instance has it (fromSnapshot: one statement); otherwise two statements and no transaction
     * (docs/decisions.md, "MFA verify without a transaction"): `claimVerify` counts the attempt on the mfaToken and
     * reads what the checks need; the session-start statement also spends the step and the token (store.spendGuard),
     * inserts the remember-device row and stores the request's audit entry (`client.audit`), or writes nothing.
     */
    async verifyAuthenticator(
      body: { mfaToken: string; value: string; rememberDevice?: boolean },
      client: ClientInfo,
      deviceId?: string,
    ): Promise<Finished> {
      core.limitIp(client);
      const hash = sha256Hex(body.mfaToken);
      const snapshot = core.pending.take(hash);
      if (snapshot) {
        const f = await fromSnapshot(snapshot, hash, body, client, deviceId);
        if (f) return f;
      }
      const view = await store.claimVerify(db, hash, MAX_WRONG_CODES_PER_TOKEN);
      if (!view) throw new AppError('MFA_TOKEN_INVALID');
      const { t, user } = view;
      let m: ReturnType<MfaCore['matchDevice']>;
      try {
        await core.pendingSignIn(db, body.mfaToken, view);
        core.limitUser(user.id);
        const { config } = await core.signInSettings(db, t.tenant_id);
        if (!config.authenticator_active)
          throw new AppError('MFA_STRATEGY_INACTIVE', 'Authenticator-app MFA is not enabled in this environment');
        const devs = deviceId === undefined ? view.devices : view.devices.filter((d) => d.id === deviceId);
        if (devs.length === 0)
          throw new AppError(
            'MFA_DEVICE_NOT_FOUND',
            deviceId
              ? `No authenticator device ${deviceId} for this user`
              : 'The user has no authenticator device; enrol one first',
          );
        m = core.matchDevice(devs, body.value);
      } catch (err) {
        // Refused before any code was judged: the attempt is given back (as the old transaction's rollback did).
        await store.refundAttempt(db, hash);
        throw err;
      }
      // A wrong or reused code: the attempt stays counted on the token; the user's lockout counts it too.
      if (m instanceof AppError) return core.attempt((tx) => core.wrongCode(tx, t, user.id, m, true));
      const { device, step } = m;
      try {
        const f = await core.finish(db, t, user, 'otp', client, body.rememberDevice, view.memberships, (remember) =>
          store.spendGuard(device.id, step, hash, remember),
        );
        // The audit entry the session start stored is committed: the hook must not stage it again.
        for (const e of client.inlined ?? []) e.stored();
        return f;
      } catch (err) {
        const message = err instanceof Error ? err.message : '';
        // Another sign-in of this user spent the step after claimVerify read the device: a reused code, counted.
        if (message.includes(store.SPEND_REUSED))
          return core.attempt((tx) => core.wrongCode(tx, t, user.id, new AppError('MFA_CODE_REUSED'), true));
        // A concurrent verify of the same mfaToken finished the sign-in first.
        if (message.includes(store.SPEND_TOKEN_GONE)) throw new AppError('MFA_TOKEN_INVALID');
        // Refused by the sign-in (account access, request gates): nothing was written; the attempt is given back.
        await store.refundAttempt(db, hash);
        throw err;
      }
    },

    /** Forced MFA and no factor yet: start an authenticator enrolment inside the sign-in. */
    async enrollAuthenticator(body: { mfaToken: string }) {
      return db.transaction(async (tx) => {
        const { user } = await core.pendingSignIn(tx, body.mfaToken);
        const cfg = await store.config(tx);
        if ((await core.devicesOf(tx, user)).some(core.usable(cfg))) throw new AppError('MFA_ALREADY_ENROLLED');
        return core.startAuthenticator(tx, user);
      });
    },

    /** The first code of that enrolment: the device is kept, recovery codes are made, and the sign-in finishes. */
    async enrollAuthenticatorVerify(
      body: { mfaToken: string; token: string; rememberDevice?: boolean },
      client: ClientInfo,
    ): Promise<Finished> {
      core.limitIp(client);
      return core.attempt(async (tx) => {
        const { t, user } = await core.pendingSignIn(tx, body.mfaToken);
        core.limitUser(user.id);
        const cfg = await store.config(tx);
        if ((await core.devicesOf(tx, user)).some(core.usable(cfg))) throw new AppError('MFA_ALREADY_ENROLLED');
        const d = await core.completeAuthenticator(tx, user.id, body.token);
        if (d instanceof AppError)
          return d.code === 'MFA_INVALID_CODE' ? core.wrongCode(tx, t, user.id, d) : { error: d };
        const codes = await core.newRecoveryCodes(tx, user.id);
        await core.emit(tx, 'user.mfa_enrolled', user, { method: 'authenticator', deviceId: d.id });
        const f = await core.finish(tx, t, user, 'otp', client, body.rememberDevice);
        return { ...f, response: { ...f.response, recoveryCode: codes[0], recoveryCodes: codes } };
      });
    },

    /**
     * A recovery code (one-time) removes the user's MFA factors, so the user can sign in with the password and enrol
     * again. Unknown email and wrong code answer the same.
     */
    async recover(body: { email: string; recoveryCode: string }, client: ClientInfo): Promise<object> {
      const email = body.email.trim().toLowerCase();
      core.limitIp(client);
      core.limitUser(`recover:${email}`);
      return core.attempt(async (tx) => {
        const user = await findByEmail(tx, email);
        if (!user) {
          sha256Hex(body.recoveryCode); // same work as a known user with a wrong code, roughly
          return { error: new AppError('MFA_INVALID_RECOVERY') };
        }
        if (isLockedNow(user)) throw new AppError('USER_LOCKED');
        if (!(await core.spendRecovery(tx, user.id, body.recoveryCode))) {
          await core.registerFailure(tx, user.id);
          return { error: new AppError('MFA_INVALID_RECOVERY') };
        }
        const removed = (await store.deleteAll(tx, user.id)) + (await core.removeWebauthn(tx, user.id));
        await store.setEnrolled(tx, user.id, false);
        await core.emit(tx, 'user.mfa_removed', user, { method: 'recovery-code', devices: removed });
        return {};
      });
    },

    /**
     * The challenge of a pending sign-in again, from its mfaToken (the hosted MFA page reads it on every view): the
     * factors on offer as the sign-in answered them, whether the user must enrol one first, and remember-device.
     */
    async challenge(mfaToken: string) {
      return db.transaction(async (tx) => {
        const { t, user } = await core.pendingSignIn(tx, mfaToken);
        const { config: cfg, policy: p } = await core.signInSettings(tx, t.tenant_id);
        const devs = (await core.devicesOf(tx, user)).filter(core.usable(cfg));
        // WebAuthn devices of the active kinds, as the gate lists them in mfaDevices.webauthn.
        const types = webauthnTypes(cfg);
        const wa = types.length > 0 ? await core.webauthnDevices(tx, user.id, types) : [];
        const sso = t.amr.some((m) => m === 'saml' || m === 'sso');
        return {
          userEmail: user.email,
          enrolled: devs.length > 0 || wa.length > 0,
          forced: p.enforce === 'Force' || (p.enforce === 'ForceExceptSAML' && !sso),
          devices: core.devicesRecord(devs, cfg, user.verified && user.email ? user.email : undefined, wa),
          authenticatorActive: cfg.authenticator_active,
          allowRemember: p.allowRemember,
        };
      });
    },

    /** Whether the pending sign-in's account lets the user remember this device. */
    async allowRemember(mfaToken: string) {
      const t = await store.lockToken(db, sha256Hex(mfaToken));
      if (!t) throw new AppError('MFA_TOKEN_INVALID');
      const { allowRemember, deviceExpirationSeconds } = await core.policyOf(db, t.tenant_id);
      return {
        allowRememberDevice: allowRemember,
        allowRememberMyDevice: allowRemember,
        mfaDeviceExpiration: deviceExpirationSeconds,
      };
    },
  };
}
export type SignInFlows = ReturnType<typeof createSignInFlows>;
