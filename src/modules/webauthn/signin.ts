import { createHmac } from 'node:crypto';
import { AppError } from '../../http/errors.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { ClientInfo, LoginService } from '../auth/index.ts';
import { webauthnTypes, type Finished } from '../mfa/index.ts';
import { findByEmail, findById, isLockedNow, type UserRow } from '../users/index.ts';
import { type AssertionBody, creationOptions, requestOptions } from './ceremony.ts';
import type { Kit } from './kit.ts';
import type { MfaEnrollBody } from './service.ts';
import * as store from './store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A passkey sign-in the server verified: the user, the amr of the proof and the gates it satisfies. */
export interface PasskeyProof {
  user: UserRow;
  amr: string[];
  satisfied: string[];
}

/** WebAuthn at sign-in: as the second factor of a pending sign-in (mfaToken), and passkeys as the first factor. */
export function createSignInFlows(deps: { db: Db; kit: Kit; login: LoginService; kek: Buffer }) {
  const { db, kit, login } = deps;
  const { core } = kit;
  const decoyKey = createHmac('sha256', deps.kek).update('gatehouse webauthn decoy credentials').digest();

  /** The pending sign-in and the active WebAuthn device types (none active: refused). */
  async function pending(tx: Queryable, mfaToken: string) {
    const p = await core.pendingSignIn(tx, mfaToken);
    const { config } = await core.signInSettings(tx, p.t.tenant_id);
    const types = webauthnTypes(config);
    if (types.length === 0)
      throw new AppError('MFA_STRATEGY_INACTIVE', 'WebAuthn MFA is not enabled in this environment');
    return { ...p, config, types };
  }

  /** Enrolling inside a sign-in is only for a user with no usable factor (else it would skip the second factor). */
  async function refuseIfEnrolled(tx: Queryable, p: Awaited<ReturnType<typeof pending>>): Promise<void> {
    const held =
      (await core.devicesOf(tx, p.user)).some(core.usable(p.config)) ||
      (await store.credentialsOf(tx, p.user.id, p.types)).length > 0;
    if (held) throw new AppError('MFA_ALREADY_ENROLLED');
  }

  /**
   * Verifies a passkey assertion (prelogin's challenge) and answers its user. The userHandle, when sent, must name
   * the credential's user. A wrong signature of a known credential counts toward the user's lockout.
   */
  async function verifyPasskey(body: AssertionBody, client: ClientInfo): Promise<PasskeyProof> {
    core.limitIp(client);
    const row = await kit.spend('login', body.response.clientDataJSON, 'body.response.clientDataJSON');
    return core.attempt(async (tx) => {
      const cred = await store.credentialByCredentialId(tx, body.id);
      if (!cred) throw new AppError('WEBAUTHN_CREDENTIAL_UNKNOWN');
      const handle = body.response.userHandle;
      if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== cred.user_id)
        throw new AppError('WEBAUTHN_VERIFICATION_FAILED', "response.userHandle does not name this passkey's user");
      const user = await findById(tx, cred.user_id, true);
      if (!user) throw new AppError('WEBAUTHN_CREDENTIAL_UNKNOWN');
      if (isLockedNow(user)) throw new AppError('USER_LOCKED');
      core.limitUser(user.id);
      let proof: Awaited<ReturnType<Kit['assert']>>;
      try {
        proof = await kit.assert(tx, cred, body, row.challenge);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await core.registerFailure(tx, user.id);
        return { error: err };
      }
      // Possession of the key and the presence test; with user verification (PIN, biometrics) also a second factor.
      const amr = proof.userVerified ? [proof.method, 'user', 'mfa'] : [proof.method, 'user'];
      return { user, amr, satisfied: proof.userVerified ? ['mfa'] : [] };
    });
  }

  return {
    verifyPasskey,

    /** Forced MFA and no factor yet: creation options for a WebAuthn device, bound to the mfaToken. */
    async enroll(body: { mfaToken: string }) {
      return db.transaction(async (tx) => {
        const p = await pending(tx, body.mfaToken);
        await refuseIfEnrolled(tx, p);
        const { t, user } = p;
        const options = await creationOptions(kit.party, user, await store.credentialsOf(tx, user.id));
        const webauthnToken = await kit.issue(tx, 'mfa-enroll', options, {
          userId: user.id,
          mfaTokenHash: t.token_hash,
        });
        return { webauthnToken, options };
      });
    },

    /** The device of that enrolment is kept, recovery codes are made, and the sign-in finishes. */
    async enrollVerify(
      body: MfaEnrollBody & { mfaToken: string; rememberDevice?: boolean },
      client: ClientInfo,
    ): Promise<Finished> {
      core.limitIp(client);
      const hash = sha256Hex(body.mfaToken);
      const row = await kit.spend(
        'mfa-enroll',
        body.options.response.clientDataJSON,
        'body.options.response.clientDataJSON',
        body.webauthnToken,
        (r) => r.mfa_token_hash === hash,
      );
      return core.attempt(async (tx) => {
        const p = await pending(tx, body.mfaToken);
        const { t, user, types } = p;
        core.limitUser(user.id);
        await refuseIfEnrolled(tx, p);
        const cred = await kit.register(tx, user, body.options, row.challenge, {
          deviceType: body.options.deviceType ?? body.deviceType,
          allowed: types,
        });
        const codes = await core.newRecoveryCodes(tx, user.id);
        await core.emit(tx, 'user.mfa_enrolled', user, { method: 'webauthn', deviceId: cred.id });
        const method = cred.backed_up ? 'swk' : 'hwk';
        const f = await core.finish(tx, t, user, method, client, body.rememberDevice);
        return { ...f, response: { ...f.response, recoveryCode: codes[0], recoveryCodes: codes } };
      });
    },

    /** Request options for one of the user's devices, bound to the mfaToken and the device. */
    async request(deviceId: string, body: { mfaToken: string }) {
      return db.transaction(async (tx) => {
        const { t, user, types } = await pending(tx, body.mfaToken);
        const cred = await kit.device(tx, user.id, deviceId, types);
        const options = await requestOptions(kit.party, [{ id: cred.credential_id, transports: cred.transports }]);
        const bind = { userId: user.id, mfaTokenHash: t.token_hash, deviceId };
        return { webauthnToken: await kit.issue(tx, 'mfa-verify', options, bind), options };
      });
    },

    /** Finishes the sign-in with an assertion of the device (a wrong one counts on the mfaToken and the lockout). */
    async verify(
      deviceId: string,
      body: { webauthnToken: string; options: AssertionBody; mfaToken: string; rememberDevice?: boolean },
      client: ClientInfo,
    ): Promise<Finished> {
      core.limitIp(client);
      const hash = sha256Hex(body.mfaToken);
      const row = await kit.spend(
        'mfa-verify',
        body.options.response.clientDataJSON,
        'body.options.response.clientDataJSON',
        body.webauthnToken,
        (r) => r.mfa_token_hash === hash && r.device_id === deviceId,
      );
      return core.attempt(async (tx) => {
        const { t, user, types } = await pending(tx, body.mfaToken);
        core.limitUser(user.id);
        const cred = await kit.device(tx, user.id, deviceId, types);
        let method: string;
        try {
          ({ method } = await kit.assert(tx, cred, body.options, row.challenge));
        } catch (err) {
          if (err instanceof AppError) return core.wrongCode(tx, t, user.id, err);
          throw err;
        }
        return core.finish(tx, t, user, method, client, body.rememberDevice);
      });
    },

    /**
     * Passkey sign-in, first step: request options. With an email (or user id), that user's credentials are allowed;
     * an unknown one (or one without passkeys) gets a decoy credential derived from it, so the answer does not tell
     * whether the account exists. Without, allowCredentials is empty (a discoverable credential picks the account).
     */
    async prelogin(body: { email?: string; userId?: string }) {
      const email = body.email?.trim().toLowerCase();
      const user = email
        ? await findByEmail(db, email)
        : body.userId && UUID.test(body.userId)
          ? await findById(db, body.userId)
          : undefined;
      const creds = user ? await store.credentialsOf(db, user.id) : [];
      const named = email ?? body.userId;
      const allow = creds.length
        ? creds.map((c) => ({ id: c.credential_id, transports: c.transports }))
        : named
          ? [
              {
                id: createHmac('sha256', decoyKey).update(named).digest('base64url'),
                transports: ['internal', 'hybrid'],
              },
            ]
          : [];
      const options = await requestOptions(kit.party, allow);
      await kit.issue(db, 'login', options);
      return options;
    },

    /** Passkey sign-in, second step: the assertion, then the session as every sign-in starts it. */
    async postlogin(body: AssertionBody, client: ClientInfo) {
      const p = await verifyPasskey(body, client);
      return login.signIn(undefined, p.user, client, p.amr, { satisfied: p.satisfied });
    },
  };
}
export type SignInFlows = ReturnType<typeof createSignInFlows>;
