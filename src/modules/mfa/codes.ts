import { timingSafeEqual } from 'node:crypto';
import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { ClientInfo } from '../auth/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import type { UserRow } from '../users/index.ts';
import type { Actor, DeviceFlows } from './devices.ts';
import type { Finished, MfaCore } from './service.ts';
import * as store from './store.ts';
import type { CodeRow } from './store.ts';
import { numericCode } from './totp.ts';

/** Wrong guesses one sent code survives before it is void. */
export const MAX_CODE_ATTEMPTS = 5;

type Purpose = 'signin-sms' | 'signin-email' | 'enroll-sms' | 'disable-sms';
const codeHash = (otcToken: string, code: string) => sha256Hex(`${otcToken}:${code.trim()}`);
const maskPhone = (p: string) => `${p.slice(0, 3)}${'*'.repeat(Math.max(0, p.length - 5))}${p.slice(-2)}`;

/** SMS and email factors: codes delivered by the messaging module, single-use, short-lived, hashed. */
export function createCodeFlows(deps: {
  db: Db;
  core: MfaCore;
  devices: DeviceFlows;
  messaging: Pick<MessagingService, 'sendSms' | 'sendEmail'>;
}) {
  const { db, core } = deps;

  /** Stores a new code (bound to its purpose, user, device and pending sign-in) and queues its message in `tx`. */
  async function send(
    tx: Queryable,
    user: UserRow,
    o: {
      purpose: Purpose;
      channel: 'sms' | 'email';
      to: string;
      tenantId?: string | null;
      deviceId?: string;
      mfaTokenHash?: string;
    },
  ) {
    await core.limitSend(user.id, tx);
    const cfg = await store.config(tx);
    const ttl = o.channel === 'sms' ? cfg.sms_ttl_seconds : cfg.email_ttl_seconds;
    const otcToken = randomSecret(32);
    const code = numericCode(6);
    await store.insertCode(tx, {
      hash: sha256Hex(otcToken),
      userId: user.id,
      purpose: o.purpose,
      deviceId: o.deviceId,
      phoneNumber: o.channel === 'sms' ? o.to : undefined,
      mfaTokenHash: o.mfaTokenHash,
      codeHash: codeHash(otcToken, code),
      ttlSeconds: ttl,
    });
    const vars = { code, expiresInMinutes: String(Math.max(1, Math.round(ttl / 60))), name: user.name };
    if (o.channel === 'sms')
      await deps.messaging.sendSms(tx, { tenantId: o.tenantId ?? null, to: o.to, type: 'MFAOTC', vars });
    else await deps.messaging.sendEmail(tx, { tenantId: o.tenantId ?? null, to: o.to, type: 'MFAOTC', vars });
    return { otcToken, ...(o.channel === 'sms' ? { phoneNumber: maskPhone(o.to) } : { email: o.to }) };
  }

  /**
   * Checks a sent code: the otcToken must be live and bound as expected; the code is compared in constant time. A
   * right code is spent; a wrong one counts against the otcToken (void after a few). Answers the row or an error.
   */
  async function check(
    tx: Queryable,
    otcToken: string,
    code: string,
    want: { purpose: Purpose; userId?: string; mfaTokenHash?: string; deviceId?: string },
  ): Promise<CodeRow | AppError> {
    const row = await store.lockCode(tx, sha256Hex(otcToken));
    if (
      !row ||
      row.purpose !== want.purpose ||
      (want.userId && row.user_id !== want.userId) ||
      (want.mfaTokenHash && row.mfa_token_hash !== want.mfaTokenHash) ||
      (want.deviceId && row.device_id !== want.deviceId)
    ) {
      return new AppError('MFA_INVALID_OTC');
    }
    if (!timingSafeEqual(Buffer.from(row.code_hash, 'hex'), Buffer.from(codeHash(otcToken, code), 'hex'))) {
      await store.codeFailure(tx, row.token_hash, MAX_CODE_ATTEMPTS);
      return new AppError('MFA_INVALID_CODE', 'body.code: the code is wrong or expired');
    }
    await store.deleteCode(tx, row.token_hash);
    return row;
  }

  async function smsActive(tx: Queryable) {
    if (!(await store.config(tx)).sms_active)
      throw new AppError('MFA_STRATEGY_INACTIVE', 'SMS MFA is not enabled in this environment');
  }

  /** Finishes a pending sign-in with a sent code. */
  async function verifySignIn(
    body: { mfaToken: string; otcToken: string; code: string; rememberDevice?: boolean },
    client: ClientInfo,
    purpose: Purpose,
    method: string,
    deviceId?: string,
  ): Promise<Finished> {
    core.limitIp(client);
    return core.attempt(async (tx) => {
      const { t, user } = await core.pendingSignIn(tx, body.mfaToken);
      core.limitUser(user.id);
      const r = await check(tx, body.otcToken, body.code, {
        purpose,
        userId: user.id,
        mfaTokenHash: t.token_hash,
        deviceId,
      });
      if (r instanceof AppError)
        return r.code === 'MFA_INVALID_CODE' ? core.wrongCode(tx, t, user.id, r) : { error: r };
      return core.finish(tx, t, user, method, client, body.rememberDevice);
    });
  }

  /** A new SMS device in progress (unverified) and its code. */
  async function startSms(
    tx: Queryable,
    user: UserRow,
    phoneNumber: string,
    tenantId: string | null,
    mfaTokenHash?: string,
  ) {
    await smsActive(tx);
    const phone = phoneNumber.replace(/-/g, '');
    await store.dropPending(tx, user.id, 'sms');
    const deviceId = await store.insertDevice(tx, {
      userId: user.id,
      kind: 'sms',
      phoneNumber: phone,
      verified: false,
    });
    return send(tx, user, { purpose: 'enroll-sms', channel: 'sms', to: phone, tenantId, deviceId, mfaTokenHash });
  }
  /** The code of that enrolment: the device is kept; the first factor of a user also gets recovery codes. */
  async function completeSms(tx: Queryable, user: UserRow, row: CodeRow) {
    const d = row.device_id ? await store.device(tx, user.id, row.device_id, true) : undefined;
    if (!d || d.verified_at) throw new AppError('MFA_NO_PENDING_ENROLLMENT');
    const first = (await store.unusedRecovery(tx, user.id)).length === 0;
    await store.markVerified(tx, d.id);
    await store.setEnrolled(tx, user.id, true);
    await core.emit(tx, 'user.mfa_enrolled', user, { method: 'sms', deviceId: d.id });
    const codes = first ? await core.newRecoveryCodes(tx, user.id) : undefined;
    return { deviceId: d.id, ...(codes ? { recoveryCode: codes[0], recoveryCodes: codes } : {}) };
  }

  return {
    // -- sign-in --
    async requestSms(body: { mfaToken: string }, deviceId: string) {
      return db.transaction(async (tx) => {
        const { t, user } = await core.pendingSignIn(tx, body.mfaToken);
        await smsActive(tx);
        const d = (await core.devicesOf(tx, user)).find((x) => x.kind === 'sms' && x.id === deviceId);
        if (!d?.phone_number) throw new AppError('MFA_DEVICE_NOT_FOUND', `No SMS device ${deviceId} for this user`);
        return send(tx, user, {
          purpose: 'signin-sms',
          channel: 'sms',
          to: d.phone_number,
          tenantId: t.tenant_id,
          deviceId: d.id,
          mfaTokenHash: t.token_hash,
        });
      });
    },
    verifySms: (
      body: { mfaToken: string; otcToken: string; code: string; rememberDevice?: boolean },
      client: ClientInfo,
      deviceId: string,
    ) => verifySignIn(body, client, 'signin-sms', 'sms', deviceId),
    async requestEmail(body: { mfaToken: string }) {
      return db.transaction(async (tx) => {
        const { t, user } = await core.pendingSignIn(tx, body.mfaToken);
        if (!(await store.config(tx)).email_active)
          throw new AppError('MFA_STRATEGY_INACTIVE', 'Email-code MFA is not enabled in this environment');
        if (!user.verified || !user.email)
          throw new AppError('MFA_STRATEGY_INACTIVE', 'Email-code MFA needs a verified email address');
        return send(tx, user, {
          purpose: 'signin-email',
          channel: 'email',
          to: user.email,
          tenantId: t.tenant_id,
          mfaTokenHash: t.token_hash,
        });
      });
    },
    verifyEmail: (
      body: { mfaToken: string; otcToken: string; code: string; rememberDevice?: boolean },
      client: ClientInfo,
    ) => verifySignIn(body, client, 'signin-email', 'email'),

    /** Forced MFA and no factor yet: enrol a phone inside the sign-in. */
    async enrollSmsAtSignIn(body: { mfaToken: string; phoneNumber: string }) {
      return db.transaction(async (tx) => {
        const { t, user } = await core.pendingSignIn(tx, body.mfaToken);
        const cfg = await store.config(tx);
        if ((await core.devicesOf(tx, user)).some(core.usable(cfg))) throw new AppError('MFA_ALREADY_ENROLLED');
        return startSms(tx, user, body.phoneNumber, t.tenant_id, t.token_hash);
      });
    },
    async enrollSmsAtSignInVerify(
      body: { otcToken: string; code: string; mfaToken?: string; rememberDevice?: boolean },
      client: ClientInfo,
    ): Promise<Finished> {
      core.limitIp(client);
      return core.attempt(async (tx) => {
        const row = await store.lockCode(tx, sha256Hex(body.otcToken));
        if (!row?.mfa_token_hash || row.purpose !== 'enroll-sms') throw new AppError('MFA_INVALID_OTC');
        const t = await store.lockToken(tx, row.mfa_token_hash);
        if (!t || (body.mfaToken && sha256Hex(body.mfaToken) !== t.token_hash)) throw new AppError('MFA_TOKEN_INVALID');
        const { user } = await core.pendingSignIn(tx, '', t);
        core.limitUser(user.id);
        const r = await check(tx, body.otcToken, body.code, {
          purpose: 'enroll-sms',
          userId: user.id,
          mfaTokenHash: t.token_hash,
        });
        if (r instanceof AppError)
          return r.code === 'MFA_INVALID_CODE' ? core.wrongCode(tx, t, user.id, r) : { error: r };
        const done = await completeSms(tx, user, r);
        const f = await core.finish(tx, t, user, 'sms', client, body.rememberDevice);
        return { ...f, response: { ...f.response, ...done } };
      });
    },

    // -- self-service --
    async enrollSms(actor: Actor, phoneNumber: string) {
      return db.transaction(async (tx) => {
        const user = await deps.devices.userOf(tx, actor, true);
        return startSms(tx, user, phoneNumber, actor.tenantId ?? user.active_tenant_id);
      });
    },
    async enrollSmsVerify(actor: Actor, body: { otcToken: string; code: string }) {
      core.limitUser(actor.userId);
      return core.attempt(async (tx) => {
        const user = await deps.devices.userOf(tx, actor, true);
        const r = await check(tx, body.otcToken, body.code, { purpose: 'enroll-sms', userId: user.id });
        if (r instanceof AppError) return { error: r };
        return completeSms(tx, user, r);
      });
    },
    /** Sends a code to the SMS device to be removed (an administrator removes without it: see verify). */
    async disableSms(actor: Actor, deviceId: string) {
      return db.transaction(async (tx) => {
        const user = await deps.devices.userOf(tx, actor, true);
        const d = (await core.devicesOf(tx, user)).find((x) => x.kind === 'sms' && x.id === deviceId);
        if (!d?.phone_number) throw new AppError('MFA_DEVICE_NOT_FOUND', `No SMS device ${deviceId} for this user`);
        return send(tx, user, {
          purpose: 'disable-sms',
          channel: 'sms',
          to: d.phone_number,
          tenantId: actor.tenantId ?? user.active_tenant_id,
          deviceId: d.id,
        });
      });
    },
    async disableSmsVerify(actor: Actor, deviceId: string, body: { otcToken: string; code: string }) {
      core.limitUser(actor.userId);
      return core.attempt(async (tx) => {
        const user = await deps.devices.userOf(tx, actor, true);
        const d = (await store.devices(tx, user.id)).find((x) => x.kind === 'sms' && x.id === deviceId);
        if (!d) throw new AppError('MFA_DEVICE_NOT_FOUND', `No SMS device ${deviceId} for this user`);
        const r = await check(tx, body.otcToken, body.code, { purpose: 'disable-sms', userId: user.id, deviceId });
        if (r instanceof AppError) {
          if (r.code === 'MFA_INVALID_CODE') await core.registerFailure(tx, user.id);
          return { error: r };
        }
        await deps.devices.remove(tx, actor, user, [d], 'sms');
        return {};
      });
    },
  };
}
export type CodeFlows = ReturnType<typeof createCodeFlows>;
