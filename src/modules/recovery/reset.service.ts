import { newId, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import {
  findByEmail,
  findById,
  findByPhone,
  findByUsername,
  membershipsWithState,
  phones,
  proveMailbox,
  updateUser,
  type UserRow,
} from '../users/index.ts';
import { createEqualizer } from '../passwordless/index.ts';
import type { RateLimiter } from '../limits/index.ts';
import { limit, type RecoveryCodes } from './codes.ts';
import * as store from './store.ts';

/** Lifetimes: the emailed link 1 hour; the SMS code 10 minutes; the token a verified SMS code answers 15 minutes. */
export const RESET_LINK_TTL = 3600;
export const RESET_SMS_CODE_TTL = 600;
export const RESET_SMS_TOKEN_TTL = 900;

export interface ResetDeps {
  db: Db;
  passwords: PasswordService;
  messaging: MessagingService;
  events: EventsService;
  codes: RecoveryCodes;
  publicUrl: string;
  /** Ends every session of the user (auth.sessions.revokeAll), after the reset has committed. */
  endSessions: (userId: string) => Promise<unknown>;
  limits: { perIp: RateLimiter; perIdentifier: RateLimiter };
}

export interface ResetRequest {
  identifier?: string;
  identifierType?: 'email' | 'phoneNumber' | 'username';
  email?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type ResetService = ReturnType<typeof createResetService>;

/**
 * Password reset: by emailed link (a 256-bit token, SHA-256 at rest, 1 hour, single use) and by SMS code (6 digits,
 * 10 minutes, 5 tries, constant-time), then `reset/verify` sets the password under the account's policy and
 * history, ends the user's sessions and emits `user.password_reset`. Requests answer the same for unknown users.
 */
export function createResetService(deps: ResetDeps) {
  const { db, codes } = deps;
  const timing = { email: createEqualizer(), sms: createEqualizer() };

  function identify(b: ResetRequest): { value: string; type: 'email' | 'phoneNumber' | 'username' } {
    const type = b.identifierType ?? 'email';
    const value = (b.identifier ?? b.email ?? '').trim();
    if (!value) throw new AppError('VALIDATION', 'identifier (or email) is required', { fields: ['identifier'] });
    if (!['email', 'phoneNumber', 'username'].includes(type))
      throw new AppError('VALIDATION', 'identifierType must be email, phoneNumber or username', {
        fields: ['identifierType'],
      });
    return { value: type === 'phoneNumber' ? value : value.toLowerCase(), type };
  }

  async function findUser(q: Queryable, id: { value: string; type: string }): Promise<UserRow | undefined> {
    if (id.type === 'phoneNumber') return findByPhone(q, id.value);
    if (id.type === 'username') return findByUsername(q, id.value);
    return findByEmail(q, id.value);
  }

  /** Issues a link token and queues the ResetPassword (or PwnedPassword) email, in the caller's transaction. */
  async function sendResetEmail(
    q: Queryable,
    user: UserRow,
    type: 'ResetPassword' | 'PwnedPassword' = 'ResetPassword',
  ): Promise<void> {
    await store.useResetTokens(q, user.id, ['email']);
    const token = randomSecret(32);
    await store.insertResetToken(q, {
      tokenHash: sha256Hex(token),
      userId: user.id,
      reason: 'email',
      ttlSeconds: RESET_LINK_TTL,
    });
    await deps.messaging.sendEmail(q, {
      tenantId: user.active_tenant_id,
      to: user.email,
      type,
      vars: { name: user.name, expiresInMinutes: String(RESET_LINK_TTL / 60) },
      linkParams: { userId: user.id, token },
    });
  }

  /** The token's row when it may be used, else the error (400 unknown / other user, 410 expired or used). */
  async function checkToken(q: Queryable, userId: string, token: string, lock: boolean): Promise<store.ResetTokenRow> {
    const row = token && token.length <= 512 ? await store.findResetToken(q, sha256Hex(token), lock) : undefined;
    if (!row || row.user_id !== userId)
      throw new AppError('RESET_TOKEN_INVALID', 'The password reset token is invalid for this user');
    if (row.used_at)
      throw new AppError('RESET_TOKEN_EXPIRED', 'The password reset token was already used; request a new one');
    if (row.expires_at <= new Date())
      throw new AppError('RESET_TOKEN_EXPIRED', 'The password reset token has expired; request a new one');
    return row;
  }

  return {
    sendResetEmail,

    /** POST .../passwords/reset (and v2 .../reset/email): emails a link when the user exists; the same answer either way. */
    async requestByEmail(b: ResetRequest, ip: string | undefined): Promise<{ sessionId: string }> {
      const id = identify(b);
      await limit(deps.limits.perIp, `reset:ip:${ip ?? 'unknown'}`, 'password reset');
      await limit(deps.limits.perIdentifier, `reset:id:${id.value}`, 'password reset');
      const finish = timing.email.start();
      const sent = await db.transaction(async (tx) => {
        const user = await findUser(tx, id);
        // A user without an email (signed up with a username) answers as an unknown one, as SMS does without a phone.
        if (user?.email) await sendResetEmail(tx, user);
        return Boolean(user?.email);
      });
      await finish(sent); // unknown identifiers answer after the typical time of a real send
      return { sessionId: newId() };
    },

    /** POST v2 .../reset/sms: texts a code to the user's primary phone; answers a session id either way. */
    async requestBySms(b: ResetRequest, ip: string | undefined): Promise<{ sessionId: string }> {
      const id = identify(b);
      await limit(deps.limits.perIp, `reset-sms:ip:${ip ?? 'unknown'}`, 'password reset code');
      await limit(deps.limits.perIdentifier, `reset-sms:id:${id.value}`, 'password reset code');
      const finish = timing.sms.start();
      const r = await db.transaction(async (tx) => {
        const user = await findUser(tx, id);
        const phone = user ? (await phones(tx, user.id))[0] : undefined;
        if (!user || !phone) return { sessionId: newId(), sent: false };
        const { id: sessionId, code } = await codes.issue(tx, {
          purpose: 'reset-sms',
          userId: user.id,
          target: phone,
          ttlSeconds: RESET_SMS_CODE_TTL,
        });
        await deps.messaging.sendSms(tx, {
          tenantId: user.active_tenant_id,
          to: phone,
          type: 'ResetPassword',
          vars: { code, expiresInMinutes: String(RESET_SMS_CODE_TTL / 60) },
        });
        return { sessionId, sent: true };
      });
      await finish(r.sent);
      return { sessionId: r.sessionId };
    },

    /** POST v2 .../reset/sms/verify: a right code answers `{userId, token}` for `reset/verify`. */
    async verifySmsCode(b: { otcToken: string; sessionId: string }): Promise<{ userId: string; token: string }> {
      const outcome = await db.transaction(async (tx) => {
        const row = UUID.test(b.sessionId) ? await store.findCode(tx, b.sessionId, 'reset-sms') : undefined;
        const error = await codes.check(tx, row, b.otcToken.trim());
        if (error) return { error };
        await store.useCode(tx, row!.id);
        const token = randomSecret(32);
        await store.insertResetToken(tx, {
          tokenHash: sha256Hex(token),
          userId: row!.user_id,
          reason: 'sms',
          ttlSeconds: RESET_SMS_TOKEN_TTL,
        });
        return { userId: row!.user_id, token };
      });
      if ('error' in outcome) throw outcome.error; // after commit, so a wrong try is counted
      return outcome;
    },

    /** POST .../passwords/reset/validate: 200 when the token may be used, else 400 / 410. Consumes nothing. */
    async validate(b: { userId: string; token: string }): Promise<void> {
      await checkToken(db, b.userId, b.token, false);
    },

    /**
     * POST .../passwords/reset/verify. A token handed out at sign-in to a migrated user without a usable hash proves
     * nothing about the mailbox: it is used up, the emailed link is sent instead, and the answer is 400
     * MAILBOX_PROOF_REQUIRED. Otherwise the password must pass the policy of the user's account and its history.
     */
    async reset(b: { userId: string; token: string; password: string }): Promise<void> {
      const outcome = await db.transaction(async (tx): Promise<'reset' | 'mailbox'> => {
        const row = await checkToken(tx, b.userId, b.token, true);
        const user = await findById(tx, b.userId, true);
        if (!user) throw new AppError('RESET_TOKEN_INVALID', 'The password reset token is invalid for this user');
        if (row.reason === 'migrated-without-password') {
          await store.useResetTokens(tx, user.id, ['migrated-without-password']);
          await sendResetEmail(tx, user);
          return 'mailbox';
        }
        await deps.passwords.validate(tx, b.password, {
          tenantId: user.active_tenant_id ?? undefined,
          userId: user.id,
          email: user.email ?? undefined,
        });
        const hash = await deps.passwords.hash(b.password);
        const values: Record<string, unknown> = { password_hash: hash, must_reset_password: false, failed_attempts: 0 };
        // An emailed link (or the vendor's link) proves the mailbox: the new password is the owner's own.
        if (row.reason === 'email' || row.reason === 'vendor-link') {
          if (!user.verified) values.verified = true;
          await proveMailbox(tx, user.id);
        }
        await updateUser(tx, user.id, values);
        await deps.passwords.remember(tx, user.id, hash);
        await store.useResetTokens(tx, user.id);
        await deps.events.emit(tx, {
          eventKey: 'user.password_reset',
          tenantId: user.active_tenant_id,
          entity: { type: 'user', id: user.id },
          data: {
            userId: user.id,
            method: row.reason === 'sms' ? 'sms' : row.reason === 'vendor-link' ? 'vendor-link' : 'email',
          },
        });
        return 'reset';
      });
      if (outcome === 'mailbox') {
        throw new AppError(
          'MAILBOX_PROOF_REQUIRED',
          'This token came from sign-in and does not prove the mailbox; a reset link was emailed to the user, use that one',
        );
      }
      await deps.endSessions(b.userId);
    },

    /**
     * After a breach (no per-identifier limits): for each known user, in one transaction, every unused reset token is
     * voided, the password hash cleared (password sign-in answers the reset-required answer of migrated users) and
     * the PwnedPassword email with a new link queued; then the users' sessions end. With `accountId` (an account's
     * administrator): users not in that account are not found, and users another account shares are left (`shared`).
     */
    async forceBreachedResets(userIds: string[], accountId?: string) {
      const ids = [...new Set(userIds.map((id) => id.toLowerCase()))];
      const shared: string[] = [];
      const reset = await db.transaction(async (tx) => {
        const done: string[] = [];
        for (const id of ids) {
          const user = await findById(tx, id, true);
          if (!user) continue;
          if (accountId) {
            // A pending invitation counts: the password would open that account too once accepted.
            const accounts = (await membershipsWithState(tx, user.id))
              .filter((m) => m.live || m.pending)
              .map((m) => m.tenant_id);
            if (!accounts.includes(accountId)) continue;
            if (accounts.length > 1) {
              shared.push(user.id);
              continue;
            }
          }
          await store.useResetTokens(tx, user.id);
          await updateUser(tx, user.id, { password_hash: null, must_reset_password: true });
          await sendResetEmail(tx, user, 'PwnedPassword');
          done.push(user.id);
        }
        return done;
      });
      for (const id of reset) await deps.endSessions(id);
      const notFound = ids.filter((id) => !reset.includes(id) && !shared.includes(id));
      return { requested: ids.length, reset, notFound, shared };
    },

    /** Vendor: a reset link for a user, to deliver by other means. */
    async vendorLink(userId: string): Promise<{ link: string; token: string; userId: string }> {
      const user = UUID.test(userId) ? await findById(db, userId) : undefined;
      if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
      const token = randomSecret(32);
      await store.insertResetToken(db, {
        tokenHash: sha256Hex(token),
        userId,
        reason: 'vendor-link',
        ttlSeconds: RESET_LINK_TTL,
      });
      const tpl = (await deps.messaging.config.listEmailTemplates('ResetPassword'))[0];
      const base = new URL(tpl?.redirectURL || `${deps.publicUrl}/account/reset-password`);
      base.searchParams.set('userId', userId);
      base.searchParams.set('token', token);
      return { link: base.toString(), token, userId };
    },
  };
}
