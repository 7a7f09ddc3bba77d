import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { webauthnTypes, type Actor } from '../mfa/index.ts';
import { type AssertionBody, creationOptions, type RegistrationBody, requestOptions } from './ceremony.ts';
import { deviceRecord, type Kit } from './kit.ts';
import * as store from './store.ts';
import type { DeviceType } from './store.ts';

export interface NewDeviceBody extends RegistrationBody {
  deviceType?: DeviceType;
  name?: string;
}
export interface MfaEnrollBody {
  deviceType: DeviceType;
  webauthnToken: string;
  options: NewDeviceBody;
}

/** The signed-in user's WebAuthn devices (passkeys) and their use as a second factor. */
export function createDeviceFlows(deps: { db: Db; kit: Kit }) {
  const { db, kit } = deps;
  const { core } = kit;

  /** The device types an MFA enrolment may add (the active WebAuthn strategies); none active: refused. */
  async function mfaTypes(q: Queryable): Promise<DeviceType[]> {
    const types = webauthnTypes((await core.signInSettings(q, undefined)).config);
    if (types.length === 0)
      throw new AppError(
        'MFA_STRATEGY_INACTIVE',
        'WebAuthn MFA (WebAuthnPlatform, WebAuthnCrossPlatform) is not enabled',
      );
    return types;
  }

  /** Registration of a new device: creation options for the user (its devices excluded), challenge bound to it. */
  async function registrationOptions(actor: Actor) {
    return db.transaction(async (tx) => {
      const user = await kit.userOf(tx, actor, true);
      const options = await creationOptions(kit.party, user, await store.credentialsOf(tx, user.id));
      await kit.issue(tx, 'register', options, { userId: user.id });
      return options;
    });
  }

  /** The browser's answer to those options: the credential is kept. */
  async function registerDevice(actor: Actor, body: NewDeviceBody) {
    const row = await kit.spend(
      'register',
      body.response.clientDataJSON,
      'body.response.clientDataJSON',
      undefined,
      (r) => r.user_id === actor.userId,
    );
    return db.transaction(async (tx) => {
      const user = await kit.userOf(tx, actor, true);
      const cred = await kit.register(tx, user, body, row.challenge, { deviceType: body.deviceType, name: body.name });
      await core.emit(tx, 'user.mfa_enrolled', user, { method: 'webauthn', deviceId: cred.id });
      return deviceRecord(cred);
    });
  }

  return {
    registrationOptions,
    registerDevice,

    async list(actor: Actor) {
      return db.transaction(async (tx) => {
        const user = await kit.userOf(tx, actor);
        return { devices: (await store.credentialsOf(tx, user.id)).map(deviceRecord) };
      });
    },

    async remove(actor: Actor, deviceId: string) {
      return db.transaction(async (tx) => {
        const user = await kit.userOf(tx, actor, true);
        await kit.remove(tx, actor, user, await kit.device(tx, user.id, deviceId));
        return {};
      });
    },

    /** MFA enrolment of a signed-in user: creation options and the webauthnToken to send back with the answer. */
    async mfaEnroll(actor: Actor) {
      return db.transaction(async (tx) => {
        const user = await kit.userOf(tx, actor, true);
        await mfaTypes(tx);
        const options = await creationOptions(kit.party, user, await store.credentialsOf(tx, user.id));
        return { webauthnToken: await kit.issue(tx, 'mfa-enroll', options, { userId: user.id }), options };
      });
    },

    /** Keeps the device as a second factor; answers the recovery codes (shown once; they replace earlier ones). */
    async mfaEnrollVerify(actor: Actor, body: MfaEnrollBody) {
      core.limitUser(actor.userId);
      const row = await kit.spend(
        'mfa-enroll',
        body.options.response.clientDataJSON,
        'body.options.response.clientDataJSON',
        body.webauthnToken,
        (r) => r.user_id === actor.userId && r.mfa_token_hash === null,
      );
      return db.transaction(async (tx) => {
        const user = await kit.userOf(tx, actor, true);
        const cred = await kit.register(tx, user, body.options, row.challenge, {
          deviceType: body.options.deviceType ?? body.deviceType,
          allowed: await mfaTypes(tx),
        });
        const codes = await core.newRecoveryCodes(tx, user.id);
        await core.emit(tx, 'user.mfa_enrolled', user, { method: 'webauthn', deviceId: cred.id });
        return { deviceId: cred.id, recoveryCode: codes[0], recoveryCodes: codes };
      });
    },

    /** Removal of a device, first step: request options for that device (the user proves holding it). */
    async mfaDisable(actor: Actor, deviceId: string) {
      return db.transaction(async (tx) => {
        const user = await kit.userOf(tx, actor, true);
        const cred = await kit.device(tx, user.id, deviceId);
        const options = await requestOptions(kit.party, [{ id: cred.credential_id, transports: cred.transports }]);
        const webauthnToken = await kit.issue(tx, 'disable', options, { userId: user.id, deviceId });
        return { webauthnToken, options };
      });
    },

    /**
     * Removes the device with an assertion of it (a wrong one counts toward the user's lockout); an administrator
     * (environment token) needs none.
     */
    async mfaDisableVerify(actor: Actor, deviceId: string, body: { webauthnToken?: string; options?: AssertionBody }) {
      core.limitUser(actor.userId);
      const proof = body.options;
      if (!proof) {
        if (!actor.admin)
          throw new AppError(
            'VALIDATION',
            'body.options is required: an assertion of the device (request it with POST …/{deviceId}/disable)',
          );
        return db.transaction(async (tx) => {
          const user = await kit.userOf(tx, actor, true);
          await kit.remove(tx, actor, user, await kit.device(tx, user.id, deviceId));
          return {};
        });
      }
      const row = await kit.spend(
        'disable',
        proof.response.clientDataJSON,
        'body.options.response.clientDataJSON',
        body.webauthnToken,
        (r) => r.user_id === actor.userId && r.device_id === deviceId,
      );
      return core.attempt(async (tx) => {
        const user = await kit.userOf(tx, actor, true);
        const cred = await kit.device(tx, user.id, deviceId);
        try {
          await kit.assert(tx, cred, proof, row.challenge);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          await core.registerFailure(tx, user.id);
          return { error: err };
        }
        await kit.remove(tx, actor, user, cred);
        return {};
      });
    },
  };
}
export type DeviceFlows = ReturnType<typeof createDeviceFlows>;
