import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Actor, MfaService } from '../mfa/index.ts';
import { setMfaEnrolled, type UserRow } from '../users/index.ts';
import {
  CHALLENGE_TTL_SECONDS,
  challengeOf,
  deviceTypeOf,
  keyMethod,
  type AssertionBody,
  type Party,
  type RegistrationBody,
  verifyAssertion,
  verifyRegistration,
} from './ceremony.ts';
import * as store from './store.ts';
import type { ChallengeRow, CredentialRow, DeviceType, Purpose } from './store.ts';

/** A device as the devices routes answer it. */
export const deviceRecord = (c: CredentialRow) => ({
  id: c.id,
  deviceType: c.device_type,
  name: c.name,
  createdAt: c.created_at.toISOString(),
  lastUsedAt: c.last_used_at ? c.last_used_at.toISOString() : null,
});

/** The steps every WebAuthn flow shares: challenges, registering a credential, judging an assertion, removal. */
export function createKit(deps: { db: Db; party: Party; mfa: MfaService }) {
  const { db, party, mfa } = deps;
  const core = mfa.core;

  return {
    party,
    core,
    userOf: mfa.devices.userOf,

    /** Stores the challenge of `options` for `purpose`, bound to a user, an mfaToken, a device; answers it. */
    async issue(
      q: Queryable,
      purpose: Purpose,
      options: { challenge: string },
      bind: { userId?: string; mfaTokenHash?: string; deviceId?: string } = {},
    ): Promise<string> {
      await store.insertChallenge(q, {
        challenge: options.challenge,
        purpose,
        ttlSeconds: CHALLENGE_TTL_SECONDS,
        ...bind,
      });
      return options.challenge;
    },

    /**
     * Spends the challenge the client data names, in a statement of its own (so it is gone even when the verify
     * fails): it must be live, for `purpose`, and pass `check` (its bindings); `webauthnToken`, when given, must be it.
     */
    async spend(
      purpose: Purpose,
      clientDataJSON: string,
      field: string,
      webauthnToken?: string,
      check: (r: ChallengeRow) => boolean = () => true,
    ): Promise<ChallengeRow> {
      const challenge = challengeOf(clientDataJSON, field);
      if (webauthnToken !== undefined && webauthnToken !== challenge)
        throw new AppError(
          'WEBAUTHN_CHALLENGE_INVALID',
          'body.webauthnToken is not the token of the options this response answers',
        );
      const row = await store.takeChallenge(db, challenge);
      if (!row || row.purpose !== purpose || !check(row)) throw new AppError('WEBAUTHN_CHALLENGE_INVALID');
      return row;
    },

    /**
     * Verifies an attestation and keeps the credential (a device type outside `allowed` is refused). A credential is
     * a second factor, so the user counts as MFA-enrolled.
     */
    async register(
      tx: Queryable,
      user: Pick<UserRow, 'id'>,
      body: RegistrationBody,
      challenge: string,
      o: { deviceType?: DeviceType; allowed?: DeviceType[]; name?: string } = {},
    ): Promise<CredentialRow> {
      const v = await verifyRegistration(party, body, challenge);
      const deviceType = deviceTypeOf(o.deviceType, body.authenticatorAttachment);
      if (o.allowed && !o.allowed.includes(deviceType))
        throw new AppError('MFA_STRATEGY_INACTIVE', `WebAuthn${deviceType} MFA is not enabled in this environment`);
      const row = await store.insertCredential(tx, {
        userId: user.id,
        credentialId: v.credentialId,
        publicKey: v.publicKey,
        counter: v.counter,
        transports: v.transports,
        deviceType,
        backedUp: v.backedUp,
        name: o.name?.trim() || (deviceType === 'Platform' ? 'Passkey' : 'Security key'),
      });
      if (!row) throw new AppError('WEBAUTHN_CREDENTIAL_EXISTS');
      await setMfaEnrolled(tx, user.id, true);
      return row;
    },

    /**
     * Judges an assertion of `cred` and records the use: the counter must move forward (a lower one is refused as a
     * possible clone, also when a concurrent use moved it first). Answers the amr method and the UV flag.
     */
    async assert(tx: Queryable, cred: CredentialRow, body: AssertionBody, challenge: string) {
      if (body.id !== cred.credential_id)
        throw new AppError('WEBAUTHN_VERIFICATION_FAILED', 'options.id is not the credential of this device');
      const v = await verifyAssertion(party, body, challenge, cred);
      if (!(await store.recordUse(tx, cred.id, v.counter, v.backedUp)))
        throw new AppError(
          'WEBAUTHN_COUNTER_REGRESSION',
          `The signature counter ${v.counter} is not above the last one`,
        );
      return { method: keyMethod(v.backedUp), userVerified: v.userVerified };
    },

    /**
     * Removes a credential. A user may not remove the last factor (WebAuthn or other) while the account's policy
     * forces MFA; an administrator may. With no factor left, recovery codes and remembered devices go too.
     */
    async remove(tx: Queryable, actor: Actor, user: UserRow, cred: CredentialRow): Promise<void> {
      const others =
        (await core.devicesOf(tx, user)).length +
        (await store.credentialsOf(tx, user.id)).filter((c) => c.id !== cred.id).length;
      if (others === 0 && !actor.admin) {
        const p = await core.policyOf(tx, actor.tenantId ?? user.active_tenant_id ?? undefined);
        if (p.enforce === 'Force' || p.enforce === 'ForceExceptSAML') throw new AppError('MFA_REQUIRED_BY_POLICY');
      }
      await store.deleteCredential(tx, user.id, cred.id);
      if (others === 0) await core.clearFactors(tx, user.id);
      await core.emit(tx, 'user.mfa_removed', user, { method: 'webauthn', deviceId: cred.id, kind: 'webauthn' });
    },

    /** A device of the user, else MFA_DEVICE_NOT_FOUND. */
    async device(q: Queryable, userId: string, deviceId: string, types?: DeviceType[]): Promise<CredentialRow> {
      const c = await store.credential(q, userId, deviceId, true);
      if (!c || (types && !types.includes(c.device_type)))
        throw new AppError('MFA_DEVICE_NOT_FOUND', `No WebAuthn device ${deviceId} usable for this user`);
      return c;
    },
  };
}
export type Kit = ReturnType<typeof createKit>;
