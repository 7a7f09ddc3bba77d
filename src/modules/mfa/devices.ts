import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { findById, type UserRow } from '../users/index.ts';
import type { MfaCore } from './service.ts';
import * as store from './store.ts';
import type { DeviceRow } from './store.ts';

/**
 * Who acts on a user's factors: the user with a user token (its account's policy applies, codes are required to
 * remove), or the environment on a user named by the gatehouse-user-id header (an administrator: no code needed).
 */
export interface Actor {
  userId: string;
  tenantId?: string;
  admin: boolean;
}

/** Self-service MFA: enrol, list and remove factors of a signed-in user. */
export function createDeviceFlows(deps: { db: Db; core: MfaCore }) {
  const { db, core } = deps;

  async function userOf(q: Queryable, actor: Actor, lock = false): Promise<UserRow> {
    const user = await findById(q, actor.userId, lock);
    if (!user) throw new AppError('USER_NOT_FOUND');
    return user;
  }

  /**
   * Removes devices. A user may not remove the last factor while the policy of the account forces MFA (enrol another
   * factor first); an administrator may. With no factor left, recovery codes and remembered devices go too.
   */
  async function remove(
    tx: Queryable,
    actor: Actor,
    user: UserRow,
    targets: DeviceRow[],
    method: string,
  ): Promise<void> {
    const all = await store.devices(tx, user.id);
    const left = all.filter((d) => !targets.some((t) => t.id === d.id));
    const keys = await core.webauthnDevices(tx, user.id);
    if (left.length === 0 && keys.length === 0 && !actor.admin) {
      const p = await core.policyOf(tx, actor.tenantId ?? user.active_tenant_id ?? undefined);
      if (p.enforce === 'Force' || p.enforce === 'ForceExceptSAML') throw new AppError('MFA_REQUIRED_BY_POLICY');
    }
    for (const d of targets) await store.deleteDevice(tx, user.id, d.id);
    if (left.length === 0 && keys.length === 0) await core.clearFactors(tx, user.id);
    for (const d of targets) await core.emit(tx, 'user.mfa_removed', user, { method, deviceId: d.id, kind: d.kind });
  }

  return {
    remove,
    userOf,
    async list(actor: Actor) {
      return db.transaction(async (tx) => {
        const user = await userOf(tx, actor, true);
        const devs = await core.devicesOf(tx, user);
        return {
          webauthn: await core.webauthnDevices(tx, user.id),
          phones: devs.filter((d) => d.kind === 'sms').map((d) => ({ id: d.id, phoneNumber: d.phone_number ?? '' })),
          authenticators: devs.filter((d) => d.kind === 'authenticator').map((d) => ({ id: d.id })),
          emails: [] as { email: string }[],
        };
      });
    },

    async enrollAuthenticator(actor: Actor) {
      return db.transaction(async (tx) => core.startAuthenticator(tx, await userOf(tx, actor, true)));
    },

    /** The first code of the enrolment; answers the recovery codes (shown once; they replace earlier ones). */
    async verifyAuthenticator(actor: Actor, token: string) {
      core.limitUser(actor.userId);
      return core.attempt(async (tx) => {
        const user = await userOf(tx, actor, true);
        const d = await core.completeAuthenticator(tx, user.id, token);
        if (d instanceof AppError) return { error: d };
        const codes = await core.newRecoveryCodes(tx, user.id);
        await core.emit(tx, 'user.mfa_enrolled', user, { method: 'authenticator', deviceId: d.id });
        return { recoveryCode: codes[0], recoveryCodes: codes, deviceId: d.id };
      });
    },

    /**
     * Removes an authenticator device (`deviceId`, else the one whose code is given). A user proves possession with a
     * current code (a wrong one counts toward lockout); an administrator needs none.
     */
    async disableAuthenticator(actor: Actor, token: string | undefined, deviceId?: string) {
      core.limitUser(actor.userId);
      return core.attempt(async (tx) => {
        const user = await userOf(tx, actor, true);
        let devs = (await core.devicesOf(tx, user)).filter((d) => d.kind === 'authenticator');
        if (deviceId !== undefined) devs = devs.filter((d) => d.id === deviceId);
        if (devs.length === 0)
          throw new AppError(
            'MFA_DEVICE_NOT_FOUND',
            deviceId ? `No authenticator device ${deviceId} for this user` : 'The user has no authenticator device',
          );
        let targets = devs;
        if (token !== undefined || !actor.admin) {
          if (token === undefined)
            throw new AppError('VALIDATION', 'body.token is required: a current code of the authenticator app');
          const r = await core.checkTotp(tx, devs, token);
          if (r instanceof AppError) {
            await core.registerFailure(tx, user.id);
            return { error: r };
          }
          targets = [r];
        } else if (deviceId === undefined) targets = devs;
        await remove(tx, actor, user, targets, 'authenticator');
        return {};
      });
    },

    /**
     * Re-authentication (step-up) with a current code of the user's authenticator app: the code's step is spent; a
     * wrong code counts towards the lockout policy, as at sign-in.
     */
    async checkCode(userId: string, code: string): Promise<void> {
      core.limitUser(userId);
      await core.attempt(async (tx) => {
        const user = await userOf(tx, { userId, admin: false }, true);
        const devs = (await core.devicesOf(tx, user)).filter((d) => d.kind === 'authenticator');
        if (devs.length === 0) {
          throw new AppError(
            'STEP_UP_UNAVAILABLE',
            'The user has no authenticator app: re-authenticate with {password}, or sign in again',
          );
        }
        const r = await core.checkTotp(tx, devs, code);
        if (!(r instanceof AppError)) return {};
        await core.registerFailure(tx, user.id);
        return { error: r };
      });
    },

    /** Environment call: removes every factor of a user (e.g. a lost phone and no recovery code). */
    async unenroll(userId: string) {
      return db.transaction(async (tx) => {
        const user = await userOf(tx, { userId, admin: true }, true);
        await core.devicesOf(tx, user);
        const removed = (await store.deleteAll(tx, user.id)) + (await core.removeWebauthn(tx, user.id));
        await store.setEnrolled(tx, user.id, false);
        await core.emit(tx, 'user.mfa_removed', user, { method: 'unenroll', devices: removed });
        return {};
      });
    },
  };
}
export type DeviceFlows = ReturnType<typeof createDeviceFlows>;
