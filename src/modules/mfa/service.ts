import type { RateLimiter } from '../limits/index.ts';
import { timingSafeEqual } from 'node:crypto';
import { decrypt, encrypt, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import {
  createRateLimiter,
  type ClientInfo,
  type LoginService,
  type SignInOptions,
  type TokenIssuer,
} from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import { addFailedAttempt, findById, isLockedNow, lockoutRule, type UserRow } from '../users/index.ts';
import type { PolicyService } from './policy.ts';
import * as store from './store.ts';
import type { DeviceRow, TokenRow } from './store.ts';
import type { MembershipRow } from '../users/index.ts';
import { matchTotp, newTotpSecret, normalizeRecovery, otpauthUri, qrDataUrl, recoveryCode } from './totp.ts';
import { createMfaGate, devicesRecord, rememberCookieName, usable, type WebAuthnFactors } from './gate.ts';
import { createPendingSignIns } from './pending.ts';

export { MFA_TOKEN_TTL_SECONDS, rememberCookieName } from './gate.ts';

/** How many wrong codes burn an mfaToken (the pending second step of a sign-in; its lifetime: MFA_TOKEN_TTL_SECONDS). */
export const MAX_WRONG_CODES_PER_TOKEN = 5;
/** Recovery codes made at enrolment (one-time, shown once). */
export const RECOVERY_CODE_COUNT = 10;
/** Unverified enrolments older than this are refused at verify. */
export const PENDING_ENROLMENT_SECONDS = 900;
export const ACR_MFA = 'http://schemas.openid.net/pape/policies/2007/06/multi-factor';

export interface MfaDeps {
  db: Db;
  kek: Buffer;
  login: LoginService;
  issue: TokenIssuer;
  passwords: PasswordService;
  events: EventsService;
  policy: PolicyService;
  /** The user's WebAuthn credentials (the webauthn module's), listed and counted with the other factors. */
  webauthn?: WebAuthnFactors;
  /** Code attempts per client IP and per user in a window (the password sign-in limits), and code sends per user. */
  limits?: {
    perIp?: number;
    perUser?: number;
    windowSeconds?: number;
  };
  /** Code sends per user (SMS and email), counted in the shared rate-limit store. */
  sends: RateLimiter;
}

const hashEq = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

export interface Finished {
  response: Record<string, unknown>;
  remember?: { name: string; value: string; maxAge: number };
}

/**
 * The sign-in side of MFA: the gate and its challenge (gate.ts), second-factor verification, and the shared factor
 * checks.
 */
export function createMfaCore(deps: MfaDeps) {
  const { db, kek, policy } = deps;
  const l = deps.limits ?? {};
  const ipLimiter = createRateLimiter(l.perIp ?? 60, l.windowSeconds ?? 60);
  const userLimiter = createRateLimiter(l.perUser ?? 20, l.windowSeconds ?? 60);
  const pending = createPendingSignIns();

  function limit(limiter: ReturnType<typeof createRateLimiter>, key: string, what: string) {
    const r = limiter.hit(key);
    if (r.limited)
      throw new AppError('RATE_LIMITED', `Too many ${what}; retry in ${r.retryAfter} s`, undefined, {
        'retry-after': String(r.retryAfter),
      });
  }

  /** Verified devices of a user, migrated factors adopted first. */
  async function devicesOf(
    q: Queryable,
    user: Pick<UserRow, 'id' | 'authenticator_mfa_secret_enc' | 'phone_number_type'>,
  ): Promise<DeviceRow[]> {
    if (user.authenticator_mfa_secret_enc || user.phone_number_type === 'mfa') await store.adoptMigrated(q, user.id);
    return store.devices(q, user.id);
  }

  /** Counts a wrong second factor against the user's lockout policy (as a wrong password is). */
  async function registerFailure(q: Queryable, userId: string): Promise<void> {
    const user = await findById(q, userId, true);
    if (!user) return;
    const p = await deps.passwords.lockoutPolicy(q, user.active_tenant_id ?? undefined);
    const counted = await addFailedAttempt(q, userId, lockoutRule(p));
    if (counted?.lockedNow) await deps.passwords.lockedOut(q, user);
  }

  /**
   * Runs `work` in a transaction; an error it answers (rather than throws) is thrown after the commit, so the
   * failure counters written next to it are kept.
   */
  async function attempt<T>(work: (tx: Queryable) => Promise<T>): Promise<Exclude<T, { error: AppError }>> {
    const out = await db.transaction(work);
    if (out && typeof out === 'object' && 'error' in out && out.error instanceof AppError) throw out.error;
    return out as Exclude<T, { error: AppError }>;
  }

  /**
   * The pending sign-in behind an mfaToken, locked; the user must exist and not be locked. `locked`: the token (and
   * its user) the caller already read and locked.
   */
  async function pendingSignIn(
    tx: Queryable,
    mfaToken: string,
    locked?: TokenRow | { t: TokenRow; user: UserRow },
  ): Promise<{ t: TokenRow; user: UserRow }> {
    let t: TokenRow | undefined;
    let user: UserRow | undefined;
    if (locked && 'user' in locked) ({ t, user } = locked);
    else if (locked) {
      t = locked;
      user = await findById(tx, t.user_id);
    } else {
      const found = await store.lockTokenWithUser(tx, sha256Hex(mfaToken));
      t = found?.t;
      user = found?.user as UserRow | undefined;
    }
    if (!t || !user) throw new AppError('MFA_TOKEN_INVALID');
    if (isLockedNow(user))
      throw new AppError(
        'USER_LOCKED',
        'The user is locked; ask an administrator to unlock it or wait for the lock to expire',
      );
    return { t, user };
  }

  /**
   * A wrong code: counted against the mfaToken (burnt after a few) and against the user's lockout. `charged`: the
   * attempt was already counted on the token (store.claimVerify); it is only burnt when out of attempts.
   */
  async function wrongCode(tx: Queryable, t: TokenRow | undefined, userId: string, err: AppError, charged = false) {
    if (t && charged) await store.burnIfSpent(tx, t.token_hash, MAX_WRONG_CODES_PER_TOKEN);
    else if (t) await store.tokenFailure(tx, t.token_hash, MAX_WRONG_CODES_PER_TOKEN);
    await registerFailure(tx, userId);
    return { error: err };
  }

  /**
   * Finds the device and step a TOTP code matches among the user's authenticator devices, without spending it (the
   * sign-in spends it in its session-start statement, see store.spendGuard). A step at or below the device's
   * `last_step` as read is answered MFA_CODE_REUSED here; the spend's own condition catches a concurrent use.
   */
  function matchDevice<D extends Pick<DeviceRow, 'id' | 'kind' | 'secret_enc' | 'last_step'>>(
    devs: D[],
    code: string,
  ): { device: D; step: number } | AppError {
    const now = Date.now();
    for (const d of devs) {
      if (d.kind !== 'authenticator' || !d.secret_enc) continue;
      const step = matchTotp(decrypt(kek, d.secret_enc), code.trim(), now);
      if (step === undefined) continue;
      if (d.last_step !== null && step <= Number(d.last_step)) return new AppError('MFA_CODE_REUSED');
      return { device: d, step };
    }
    return new AppError('MFA_INVALID_CODE', 'body.value: the code is wrong or expired');
  }

  /**
   * Checks a TOTP code against the user's authenticator devices (or one of them) and spends its step. Answers the
   * device, or an error (wrong code, or a code already used).
   */
  async function checkTotp<D extends Pick<DeviceRow, 'id' | 'kind' | 'secret_enc'>>(
    tx: Queryable,
    devs: D[],
    code: string,
    spendToken?: string,
  ): Promise<D | AppError> {
    const now = Date.now();
    for (const d of devs) {
      if (d.kind !== 'authenticator' || !d.secret_enc) continue;
      const step = matchTotp(decrypt(kek, d.secret_enc), code.trim(), now);
      if (step === undefined) continue;
      const fresh = spendToken
        ? await store.acceptStepAndToken(tx, d.id, step, spendToken)
        : await store.acceptStep(tx, d.id, step);
      if (!fresh) return new AppError('MFA_CODE_REUSED');
      return d;
    }
    return new AppError('MFA_INVALID_CODE', 'body.value: the code is wrong or expired');
  }

  /**
   * Finishes a sign-in after the second factor: tokens with amr + mfa + method, and the remember-device cookie.
   * `memberships`: the user's, when the caller read them with the pending sign-in (see store.claimVerify). `guard`:
   * the flow's writes made by the session-start statement (store.spendGuard), given the remember-device row to insert
   * with them (when asked and allowed); the token is spent there, and `q` need not be a transaction.
   */
  async function finish(
    q: Queryable,
    t: TokenRow,
    user: UserRow,
    method: string,
    client: ClientInfo,
    rememberDevice?: boolean,
    memberships?: (MembershipRow & { live: boolean })[],
    guard?: (remember?: store.RememberRow) => NonNullable<SignInOptions['guard']>,
  ): Promise<Finished> {
    const amr = [...new Set([...t.amr, 'mfa', method])];
    const offer = rememberDevice ? await rememberOffer(q, t.tenant_id, user.id) : undefined;
    const opts = { tenantId: t.tenant_id, satisfied: ['mfa'], resumes: 'mfa', memberships };
    if (guard) {
      // The token, the step and the remember-device row are written by the session-start statement.
      const response = await deps.login.signIn(q, user, client, amr, { ...opts, guard: guard(offer?.row) });
      return { response: response as Record<string, unknown>, remember: offer?.cookie };
    }
    await store.deleteToken(q, t.token_hash);
    const response = await deps.login.signIn(q, user, client, amr, opts);
    if (offer) await store.remember(q, offer.row.userId, offer.row.hash, offer.row.ttlSeconds);
    return { response: response as Record<string, unknown>, remember: offer?.cookie };
  }

  /** The remember-device row and cookie of a sign-in that asked for it, when the account's policy allows remembering. */
  async function rememberOffer(
    q: Queryable,
    tenantId: string,
    userId: string,
  ): Promise<{ row: store.RememberRow; cookie: NonNullable<Finished['remember']> } | undefined> {
    const { policy: p } = await policy.signInSettings(q, tenantId);
    if (!p.allowRemember) return undefined;
    const value = randomSecret(32);
    return {
      row: { userId, hash: sha256Hex(value), ttlSeconds: p.deviceExpirationSeconds },
      cookie: { name: rememberCookieName(userId), value, maxAge: p.deviceExpirationSeconds },
    };
  }

  /** New recovery codes (replacing any), answered once in clear and stored as SHA-256. */
  async function newRecoveryCodes(tx: Queryable, userId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, recoveryCode);
    await store.replaceRecovery(
      tx,
      userId,
      codes.map((c) => sha256Hex(normalizeRecovery(c))),
    );
    return codes;
  }

  /** Spends a recovery code if it is one of the user's unused ones; every stored hash is compared. */
  async function spendRecovery(tx: Queryable, userId: string, code: string): Promise<boolean> {
    const h = sha256Hex(normalizeRecovery(code));
    let match: string | undefined;
    for (const stored of await store.unusedRecovery(tx, userId)) if (hashEq(stored, h) && !match) match = stored;
    return match ? store.spendRecovery(tx, userId, match) : false;
  }

  /** An authenticator enrolment in progress: a sealed secret, its QR code and URI. */
  async function startAuthenticator(tx: Queryable, user: Pick<UserRow, 'id' | 'email' | 'username'>) {
    const cfg = await store.config(tx);
    if (!cfg.authenticator_active)
      throw new AppError('MFA_STRATEGY_INACTIVE', 'Authenticator-app MFA is not enabled in this environment');
    const secret = newTotpSecret();
    await store.dropPending(tx, user.id, 'authenticator');
    const deviceId = await store.insertDevice(tx, {
      userId: user.id,
      kind: 'authenticator',
      secretEnc: encrypt(kek, secret),
      verified: false,
    });
    const uri = otpauthUri(secret, cfg.service_name, user.email ?? user.username ?? user.id);
    return { qrCode: await qrDataUrl(uri), uri, deviceId };
  }

  /** Verifies the first code of an authenticator enrolment; answers the device or an error. */
  async function completeAuthenticator(tx: Queryable, userId: string, code: string): Promise<DeviceRow | AppError> {
    const d = await store.pending(tx, userId, 'authenticator');
    if (!d || d.created_at.getTime() < Date.now() - PENDING_ENROLMENT_SECONDS * 1000)
      return new AppError('MFA_NO_PENDING_ENROLLMENT');
    const step = matchTotp(decrypt(kek, d.secret_enc ?? ''), code.trim());
    if (step === undefined) return new AppError('MFA_INVALID_CODE', 'body.token: the code is wrong or expired');
    await store.markVerified(tx, d.id, step);
    await store.setEnrolled(tx, userId, true);
    return d;
  }

  async function emit(
    tx: Queryable,
    key: 'user.mfa_enrolled' | 'user.mfa_removed',
    user: Pick<UserRow, 'id' | 'active_tenant_id'>,
    data: Record<string, unknown>,
  ) {
    await deps.events.emit(tx, {
      eventKey: key,
      tenantId: user.active_tenant_id ?? undefined,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, ...data },
    });
  }

  return {
    gate: createMfaGate(policy, pending, deps.webauthn),
    /** The user's WebAuthn devices (any type when `types` is left out); none without the webauthn module. */
    webauthnDevices: (
      q: Queryable,
      userId: string,
      types: ('Platform' | 'CrossPlatform')[] = ['Platform', 'CrossPlatform'],
    ) => (deps.webauthn ? deps.webauthn.devices(q, userId, types) : Promise.resolve([])),
    removeWebauthn: (q: Queryable, userId: string) => (deps.webauthn ? deps.webauthn.removeAll(q, userId) : 0),
    /** The user has no factor left: recovery codes, remembered devices and pending steps go, and the flag is cleared. */
    async clearFactors(q: Queryable, userId: string): Promise<void> {
      await store.deleteAll(q, userId);
      await store.setEnrolled(q, userId, false);
    },
    /** The TOTP sign-ins this instance challenged, as the challenge read them (pending.ts). */
    pending,
    /** The gate's prefetch (its entry in the sign-in gate list): the kinds of the user's verified devices. */
    gatePrefetch: store.heldKindsSql,
    /** Rate limits (429): code attempts per IP and per user, code sends per user. */
    limitIp: (client: ClientInfo) => limit(ipLimiter, client.ip ?? 'unknown', 'MFA attempts from this address'),
    limitUser: (userId: string) => limit(userLimiter, userId, 'MFA code attempts for this user'),
    /** Code sends per user, in the send's transaction (a rolled-back send is not counted). */
    async limitSend(userId: string, q: Queryable) {
      const r = await deps.sends.hit(userId, q);
      if (r.limited)
        throw new AppError(
          'RATE_LIMITED',
          `Too many code requests for this user; retry in ${r.retryAfter} s`,
          undefined,
          {
            'retry-after': String(r.retryAfter),
          },
        );
    },
    devicesOf,
    devicesRecord,
    registerFailure,
    attempt,
    pendingSignIn,
    wrongCode,
    checkTotp,
    matchDevice,
    finish,
    newRecoveryCodes,
    spendRecovery,
    startAuthenticator,
    completeAuthenticator,
    emit,
    usable,
    policyOf: (q: Queryable, tenantId: string | undefined) => policy.effective(q, tenantId),
    /** The configuration and the account's policy for the sign-in paths (cached in process; see MFA_SIGN_IN_CACHE_MS). */
    signInSettings: (q: Queryable, tenantId: string | undefined) => policy.signInSettings(q, tenantId),
    /** The `acr` claim of tokens whose session passed a second factor. */
    acr: async (_q: Queryable, a: { amr: string[] }) => (a.amr.includes('mfa') ? { acr: ACR_MFA } : {}),
  };
}
export type MfaCore = ReturnType<typeof createMfaCore>;
