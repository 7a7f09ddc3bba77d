import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import { findByEmail, findById, proveMailbox, updateUser, type UserRow } from '../users/index.ts';
import type { RateLimiter } from '../limits/index.ts';
import { assertEmailChangeAllowed } from '../credentials/index.ts';
import { limit, type RecoveryCodes } from './codes.ts';
import * as store from './store.ts';

/** The emailed verification link lives 24 hours; the code in the same message 30 minutes. */
export const VERIFY_LINK_TTL = 86400;
export const VERIFY_CODE_TTL = 1800;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;

export interface VerificationDeps {
  db: Db;
  messaging: MessagingService;
  events: EventsService;
  codes: RecoveryCodes;
  limits: { perIdentifier: RateLimiter };
  /** Ends the user's sessions (a temporary password was dropped: sessions it started end too). */
  endSessions?: (userId: string) => Promise<unknown>;
}

export type VerificationService = ReturnType<typeof createVerificationService>;

/**
 * Email verification: an EmailVerification message with a link (`userId` + `token`, 24 h) and a 6-digit code (30 min);
 * either marks the user `verified`. The code also confirms an email change (`email/me` with a new address): the
 * address changes only once its owner has entered the code sent there.
 */
export function createVerificationService(deps: VerificationDeps) {
  const { db, codes } = deps;

  async function send(q: Queryable, user: UserRow, email: string | null): Promise<void> {
    if (!email) throw new AppError('USER_HAS_NO_EMAIL', `User ${user.id} has no email address to verify`);
    const token = randomSecret(32);
    await store.insertVerifyToken(q, {
      tokenHash: sha256Hex(token),
      userId: user.id,
      email,
      ttlSeconds: VERIFY_LINK_TTL,
    });
    const { code } = await codes.issue(q, {
      purpose: 'verify-email',
      userId: user.id,
      target: email,
      ttlSeconds: VERIFY_CODE_TTL,
    });
    await deps.messaging.sendEmail(q, {
      tenantId: user.active_tenant_id,
      to: email,
      type: 'EmailVerification',
      vars: { name: user.name, code, expiresInMinutes: String(VERIFY_CODE_TTL / 60) },
      linkParams: { userId: user.id, token },
    });
  }

  /** Marks the address verified; true when that dropped a temporary password (the caller then ends the sessions). */
  async function markVerified(q: Queryable, user: UserRow, email: string): Promise<boolean> {
    const values: Record<string, unknown> = { verified: true };
    if (email !== user.email) {
      // A change asked for before the user emails policy forbade changes cannot be completed after it.
      await assertEmailChangeAllowed(q);
      const other = await findByEmail(q, email);
      if (other && other.id !== user.id) throw new AppError('USER_EXISTS', `email ${email} belongs to another user`);
      values.email = email;
    }
    await updateUser(q, user.id, values);
    // A changed address voids every other emailed proof (links and codes to the old one); else only the used kind.
    if (values.email) await store.forgetEmailProofs(q, user.id);
    else await store.useVerifyTokens(q, user.id);
    await deps.events.emit(q, {
      eventKey: 'user.updated',
      tenantId: user.active_tenant_id,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, verified: true, ...(values.email ? { emailChanged: true } : {}) },
    });
    return proveMailbox(q, user.id);
  }

  return {
    /** Queues the EmailVerification message for a user's current address, in the caller's transaction (for other flows). */
    send: (q: Queryable, user: UserRow) => send(q, user, user.email),

    /** Vendor: (re)send the verification email of a user. 409 when already verified. */
    async sendFor(userId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const user = UUID.test(userId) ? await findById(tx, userId) : undefined;
        if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
        if (user.verified) throw new AppError('CONFLICT', 'The user is already verified');
        await limit(deps.limits.perIdentifier, `verify:${user.id}`, 'verification email', tx);
        await send(tx, user, user.email);
      });
    },

    /** The signed-in user asks for a code: to their own address (verification) or to a new one (email change). */
    async requestForMe(userId: string, emailIn: string): Promise<void> {
      const email = emailIn.trim().toLowerCase();
      if (!EMAIL.test(email)) throw new AppError('VALIDATION', 'email must be an email address', { fields: ['email'] });
      await db.transaction(async (tx) => {
        const user = await findById(tx, userId);
        if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
        if (email === user.email && user.verified) throw new AppError('CONFLICT', 'This email is already verified');
        // The user emails policy may forbid users to change their own address (verifying the current one stays allowed).
        if (email !== user.email) await assertEmailChangeAllowed(tx);
        if (email !== user.email && (await findByEmail(tx, email)))
          throw new AppError('USER_EXISTS', `email ${email} belongs to another user`);
        await limit(deps.limits.perIdentifier, `verify:${user.id}`, 'verification email', tx);
        await send(tx, user, email);
      });
    },

    /** The signed-in user enters the code sent to `email`. */
    async verifyMine(userId: string, b: { code: string; email: string }): Promise<void> {
      const email = b.email.trim().toLowerCase();
      const outcome = await db.transaction(async (tx) => {
        const user = await findById(tx, userId, true);
        if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
        const row = await store.latestCode(tx, userId, 'verify-email');
        const err = await codes.check(tx, row && row.target === email ? row : undefined, b.code.trim());
        if (err) return { error: err };
        await store.useCode(tx, row!.id);
        return { dropped: await markVerified(tx, user, email) };
      });
      if ('error' in outcome) throw outcome.error; // after commit: a wrong try is counted
      if (outcome.dropped) await deps.endSessions?.(userId);
    },

    /** The link of the message: `{userId, token}`. 400 unknown, 410 expired, used, or for an address the user no longer has. */
    async verifyLink(b: { userId: string; token: string }): Promise<void> {
      const dropped = await db.transaction(async (tx) => {
        const row = b.token && b.token.length <= 512 ? await store.findVerifyToken(tx, sha256Hex(b.token)) : undefined;
        if (!row || row.user_id !== b.userId)
          throw new AppError('VERIFY_TOKEN_INVALID', 'The email verification token is invalid for this user');
        if (row.used_at) throw new AppError('VERIFY_TOKEN_EXPIRED', 'The email verification token was already used');
        if (row.expires_at <= new Date())
          throw new AppError('VERIFY_TOKEN_EXPIRED', 'The email verification token has expired; request a new one');
        const user = await findById(tx, b.userId, true);
        if (!user) throw new AppError('VERIFY_TOKEN_INVALID', 'The email verification token is invalid for this user');
        return markVerified(tx, user, row.email);
      });
      if (dropped) await deps.endSessions?.(b.userId);
    },
  };
}
