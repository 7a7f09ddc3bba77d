import { createHmac, randomInt } from 'node:crypto';
import { newId, safeEqual } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import { assertEmailChangeAllowed } from '../credentials/index.ts';
import type { EmailRequest } from '../messaging/index.ts';
import { assertEmailDomainAllowed } from '../restrictions/index.ts';
import type { UsersCore } from './profile.service.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';
import * as emails from './emails.store.ts';

/** The code sent to a new address lives 30 minutes (as the verification code); 5 wrong tries burn it. */
export const EMAIL_CODE_TTL = 1800;
export const EMAIL_CODE_ATTEMPTS = 5;
const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;

/** What the composition root gives the users module to email codes (it has no messaging dependency of its own). */
export interface EmailCodesPort {
  /** The KEK: codes are stored as HMAC-SHA256 under a key derived from it. */
  kek: Buffer;
  /** messaging.sendEmail: queues the message in the caller's transaction. */
  sendEmail: (q: Queryable, m: EmailRequest) => Promise<unknown>;
  /** Code requests per user (the CODE_RATE_LIMIT_* settings). */
  /** Code sends per user (the shared rate-limit store; counted in the caller's transaction). */
  limiter: { hit(key: string, q?: Queryable): Promise<{ limited: boolean; retryAfter: number }> };
}

export interface UserEmail {
  id: string;
  userId: string;
  email: string;
  verified: boolean;
  isPrimary: boolean;
  createdAt: string;
  updatedAt: string;
}

const toWire = (r: emails.ListedEmail): UserEmail => ({
  id: r.id,
  userId: r.user_id,
  email: r.email,
  verified: r.verified,
  isPrimary: r.is_primary,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});
const secondary = (r: emails.EmailRow): UserEmail => toWire({ ...r, is_primary: false });

function normalise(emailIn: string, field = 'email'): string {
  const email = emailIn.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new AppError('VALIDATION', `${field} must be an email address`, { fields: [field] });
  return email;
}
const taken = (email: string) => new AppError('USER_EXISTS', `email ${email} belongs to a user of the environment`);

/**
 * Several addresses per user (routes.md /users/emails/v1): the primary stays users.email (sign-in, token claim);
 * secondary ones are proven with an emailed code before they can become primary. A primary switch publishes
 * user.email_changed (emailed proofs of the old address become void), as the vendor's change does.
 */
export function createUserEmailOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;
  const codes = deps.emailCodes;
  const port = codes && {
    ...codes,
    key: createHmac('sha256', codes.kek).update('gatehouse user email codes v1').digest(),
  };
  const hash = (id: string, code: string) => createHmac('sha256', port!.key).update(`${id}:${code}`).digest('hex');

  async function sendCode(tx: Queryable, user: store.UserRow, row: emails.EmailRow): Promise<void> {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await emails.setCode(tx, row.id, hash(row.id, code), EMAIL_CODE_TTL);
    await port!.sendEmail(tx, {
      tenantId: user.active_tenant_id,
      to: row.email,
      type: 'EmailVerification',
      vars: { name: user.name, email: row.email, code, expiresInMinutes: String(EMAIL_CODE_TTL / 60) },
    });
  }

  /** Adds an address after the checks every writer of an address makes (free in the environment, allowed domain). */
  async function add(
    userId: string,
    emailIn: string,
    verified: boolean,
    selfService: boolean,
  ): Promise<{ created: boolean; email: UserEmail }> {
    const email = normalise(emailIn);
    if (!verified && !port)
      throw new AppError(
        'EMAIL_CODES_UNAVAILABLE',
        'Email codes are not configured on this server (the users module has no emailCodes)',
      );
    try {
      return await db.transaction(async (tx) => {
        const user = await core.requireUser(tx, userId, true);
        await emails.lockAddress(tx, email);
        const owner = await emails.ownerOf(tx, email);
        if (owner && owner !== user.id) throw taken(email);
        const mine = owner ? await emails.findOfUser(tx, user.id, { email }, true) : undefined;
        // Adding again an unverified address of one's own: a new code (self-service), or the vendor's proof of it.
        if (owner && (!mine || mine.verified || (!selfService && !verified)))
          throw new AppError('CONFLICT', `email ${email} is already an address of this user`);
        for (const m of await store.memberships(tx, user.id))
          await assertEmailDomainAllowed(tx, m.tenant_id, email, 'body.email');
        if (selfService) {
          const r = await port!.limiter.hit(`user-email:${user.id}`, tx);
          if (r.limited)
            throw new AppError('RATE_LIMITED', `Too many email code requests; retry in ${r.retryAfter} s`, undefined, {
              'retry-after': String(r.retryAfter),
            });
        }
        if (mine) {
          if (selfService) await sendCode(tx, user, mine);
          return { created: false, email: secondary(selfService ? mine : await emails.markVerified(tx, mine.id)) };
        }
        const row = await emails.insert(tx, { id: newId(), userId: user.id, email, verified });
        if (!verified) await sendCode(tx, user, row);
        await deps.events?.emit(tx, {
          eventKey: 'user.updated',
          tenantId: user.active_tenant_id,
          entity: { type: 'user', id: user.id },
          data: { userId: user.id, changed: ['emails'], addedEmail: email },
        });
        return { created: true, email: secondary(row) };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw taken(email);
      throw err;
    }
  }

  async function remove(userId: string, emailId: string): Promise<void> {
    await db.transaction(async (tx) => {
      const user = await core.requireUser(tx, userId, true);
      if (emailId === user.id)
        throw new AppError(
          'CONFLICT',
          'The primary email cannot be deleted; make another verified address primary first',
        );
      const row = isUuid(emailId) ? await emails.findOfUser(tx, user.id, { id: emailId }, true) : undefined;
      if (!row) throw new AppError('USER_EMAIL_NOT_FOUND', `User ${user.id} has no email with id ${emailId}`);
      await emails.remove(tx, row.id);
      await deps.events?.emit(tx, {
        eventKey: 'user.updated',
        tenantId: user.active_tenant_id,
        entity: { type: 'user', id: user.id },
        data: { userId: user.id, changed: ['emails'], removedEmail: row.email },
      });
    });
  }

  /** Swaps a verified secondary address with users.email; the old primary stays as a secondary one, verified as it was. */
  async function makePrimary(userId: string, emailIn: string, selfService: boolean): Promise<void> {
    const email = normalise(emailIn);
    try {
      await db.transaction(async (tx) => {
        if (selfService) await assertEmailChangeAllowed(tx);
        const user = await core.requireUser(tx, userId, true);
        if (user.email === email) return; // already primary: nothing to do
        await emails.lockAddress(tx, email);
        if (user.email) await emails.lockAddress(tx, user.email);
        const row = await emails.findOfUser(tx, user.id, { email }, true);
        if (!row) throw new AppError('USER_EMAIL_NOT_FOUND', `User ${user.id} has no email ${email}`);
        if (!row.verified)
          throw new AppError('CONFLICT', `email ${email} is not verified; verify it before making it primary`);
        // A user without a primary address (signed up with a username) has nothing to keep as a secondary one.
        if (user.email) await emails.replaceAddress(tx, row.id, user.email, user.verified);
        else await emails.remove(tx, row.id);
        await store.updateUser(tx, user.id, { email, verified: true });
        await deps.events?.bus.publish(tx, 'user.email_changed', { userId: user.id });
        await deps.events?.emit(tx, {
          eventKey: 'user.updated',
          tenantId: user.active_tenant_id,
          entity: { type: 'user', id: user.id },
          data: {
            userId: user.id,
            email,
            previousEmail: user.email,
            tenantId: user.active_tenant_id,
            changed: user.verified ? ['email'] : ['email', 'verified'],
          },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw taken(email);
      throw err;
    }
  }

  return {
    emails: {
      add,
      remove,
      makePrimary,
      async listOfUser(userId: string): Promise<UserEmail[]> {
        await core.requireUser(db, userId);
        return (await emails.listOfUser(db, userId)).map(toWire);
      },
      async list(
        f: Omit<emails.ListFilter, 'userIds' | 'email'> & { userIds?: string; email?: string },
      ): Promise<{ items: UserEmail[]; total: number }> {
        const ids = f.userIds
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = ids?.find((id) => !isUuid(id));
        if (bad)
          throw new AppError('VALIDATION', `userIds must be a comma-separated list of user ids (${bad} is not one)`, {
            fields: ['userIds'],
          });
        const r = await emails.list(db, {
          ...f,
          userIds: ids?.length ? ids : undefined,
          email: f.email?.trim().toLowerCase() || undefined,
        });
        return { items: r.items.map(toWire), total: r.total };
      },
      /** The code sent to `email` marks it verified. 400 wrong (5 tries), 410 expired or used. */
      async verify(userId: string, b: { email: string; code: string }): Promise<UserEmail> {
        const email = normalise(b.email);
        let answer: UserEmail | undefined;
        const error = await db.transaction(async (tx) => {
          const user = await core.requireUser(tx, userId, true);
          const row = await emails.findOfUser(tx, user.id, { email }, true);
          if (!row) {
            if (user.email === email)
              throw new AppError(
                'CONFLICT',
                `email ${email} is the primary address; verify it with POST /identity/resources/users/v1/email/verify`,
              );
            throw new AppError('USER_EMAIL_NOT_FOUND', `User ${user.id} has no email ${email}`);
          }
          if (row.verified) throw new AppError('CONFLICT', `email ${email} is already verified`);
          if (!row.code_hash || !port)
            return new AppError('OTC_EXPIRED', 'The code was already used or replaced; request a new one');
          if (row.code_expires_at! <= new Date())
            return new AppError('OTC_EXPIRED', 'The code has expired; request a new one');
          const given = /^\d{6}$/.test(b.code.trim()) ? b.code.trim() : '';
          if (!safeEqual(hash(row.id, given), row.code_hash)) {
            const burn = row.code_attempts + 1 >= EMAIL_CODE_ATTEMPTS;
            await emails.countAttempt(tx, row.id, burn);
            return burn
              ? new AppError(
                  'OTC_ATTEMPTS_EXCEEDED',
                  `Too many wrong codes (${EMAIL_CODE_ATTEMPTS}); this code no longer works, request a new one`,
                )
              : new AppError('OTC_INVALID', 'The code is wrong');
          }
          answer = secondary(await emails.markVerified(tx, row.id));
          await deps.events?.emit(tx, {
            eventKey: 'user.updated',
            tenantId: user.active_tenant_id,
            entity: { type: 'user', id: user.id },
            data: { userId: user.id, changed: ['emails'], verifiedEmail: email },
          });
          return null;
        });
        if (error) throw error; // after commit: a wrong try is counted
        return answer!;
      },
    },
  };
}
