import { createHmac, randomInt } from 'node:crypto';
import { iso } from '../../lib/time.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { newId, safeEqual } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { RateLimiter } from '../limits/index.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import {
  addPhoneNumber,
  findById,
  listPhoneNumbers,
  markPhoneNumberVerified,
  phoneNumberById,
  phoneNumberByValue,
  phoneNumbersOf,
  removePhoneNumber,
  type PhoneNumberFilter,
  type PhoneNumberRow,
  type UserRow,
} from '../users/index.ts';
import { limit, MAX_CODE_ATTEMPTS } from './codes.ts';
import * as store from './phones.store.ts';

/** How long a texted phone code works. */
export const PHONE_CODE_TTL_SECONDS = 600;

export type PhoneNumberOut = {
  id: string;
  userId: string;
  phoneNumber: string;
  verified: boolean;
  createdAt: string;
  updatedAt: string;
};

export interface PhonesDeps {
  db: Db;
  kek: Buffer;
  messaging: Pick<MessagingService, 'sendSms'>;
  events: EventsService;
  limits: { perIp: RateLimiter; perIdentifier: RateLimiter };
}

export type PhonesService = ReturnType<typeof createPhonesService>;

const out = (r: PhoneNumberRow): PhoneNumberOut => ({
  id: r.id,
  userId: r.user_id,
  phoneNumber: r.phone_number,
  verified: r.verified,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

/**
 * A user's phone numbers (the `user_phone_numbers` identifiers of the users module): listed by the vendor or an
 * account admin, managed by the user. Adding a number with verification and removing a verified number need a
 * 6-digit code texted to that number (VerifyPhoneNumber / ResetPhoneNumber SMS): single use, 10 minutes, stored as
 * HMAC-SHA256 under a KEK-derived key bound to the code's row, compared in constant time, burned after 5 wrong
 * tries, rate-limited per client IP, per number and per user. The otcToken is the code row's id and only works for
 * the user it was issued to.
 */
export function createPhonesService(deps: PhonesDeps) {
  const { db } = deps;
  const key = createHmac('sha256', deps.kek).update('gatehouse phone codes v1').digest();
  const hash = (id: string, code: string) => createHmac('sha256', key).update(`${id}:${code}`).digest('hex');

  async function requireUser(q: Queryable, userId: string, lock = false): Promise<UserRow> {
    const u = isUuid(userId) ? await findById(q, userId, lock) : undefined;
    if (!u) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
    return u;
  }

  async function ownNumber(q: Queryable, userId: string, phoneId: string, lock = false): Promise<PhoneNumberRow> {
    const row = isUuid(phoneId) ? await phoneNumberById(q, phoneId, lock) : undefined;
    if (!row || row.user_id !== userId)
      throw new AppError('PHONE_NOT_FOUND', `The user has no phone number with id ${phoneId}`);
    return row;
  }

  async function limitSends(ip: string | undefined, userId: string, phone: string, q?: Queryable): Promise<void> {
    await limit(deps.limits.perIp, `ip:${ip ?? 'unknown'}`, 'phone code', q);
    await limit(deps.limits.perIdentifier, `phone:${phone}`, 'phone code', q);
    await limit(deps.limits.perIdentifier, `user:${userId}`, 'phone code', q);
  }

  /** Issues a code for the number and texts it; answers the otcToken. Runs in the caller's transaction. */
  async function sendCode(q: Queryable, user: UserRow, purpose: 'verify' | 'delete', phone: string): Promise<string> {
    const id = newId();
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await store.insertCode(q, {
      id,
      purpose,
      userId: user.id,
      phone,
      codeHash: hash(id, code),
      ttlSeconds: PHONE_CODE_TTL_SECONDS,
    });
    await deps.messaging.sendSms(q, {
      tenantId: user.active_tenant_id,
      to: phone,
      type: purpose === 'verify' ? 'VerifyPhoneNumber' : 'ResetPhoneNumber',
      vars: { code, name: user.name, expiresInMinutes: String(PHONE_CODE_TTL_SECONDS / 60) },
    });
    return id;
  }

  /**
   * Checks an otcToken + code of the user and purpose. Answers the row when it is good (the caller uses it up), or
   * the error to throw after the transaction commits (a wrong try is counted, the 5th burns the code).
   */
  async function checkCode(
    q: Queryable,
    userId: string,
    purpose: 'verify' | 'delete',
    otcToken: string,
    code: string,
  ): Promise<{ row: store.PhoneCodeRow } | { error: AppError }> {
    const row = isUuid(otcToken) ? await store.findCode(q, otcToken) : undefined;
    if (!row || row.user_id !== userId || row.purpose !== purpose)
      return { error: new AppError('OTC_INVALID', 'The otcToken is unknown or belongs to another request') };
    if (row.used_at)
      return { error: new AppError('OTC_EXPIRED', 'The code was already used or replaced; request a new one') };
    if (row.expires_at <= new Date())
      return { error: new AppError('OTC_EXPIRED', 'The code has expired; request a new one') };
    const given = /^\d{6}$/.test(code.trim()) ? code.trim() : '';
    if (safeEqual(hash(row.id, given), row.code_hash)) return { row };
    const burn = row.attempts + 1 >= MAX_CODE_ATTEMPTS;
    await store.countAttempt(q, row.id, burn);
    return {
      error: burn
        ? new AppError(
            'OTC_ATTEMPTS_EXCEEDED',
            `Too many wrong codes (${MAX_CODE_ATTEMPTS}); this code no longer works, request a new one`,
          )
        : new AppError('OTC_INVALID', 'The code is wrong'),
    };
  }

  const changed = (q: Queryable, user: UserRow, action: string, phone: string) =>
    deps.events.emit(q, {
      eventKey: 'user.updated',
      tenantId: user.active_tenant_id,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, email: user.email, changed: ['phoneNumbers'], action, phoneNumber: phone },
    });

  /** The number must be free or the user's own; answers the user's row for it when it is theirs. */
  async function assertAvailable(q: Queryable, userId: string, phone: string): Promise<PhoneNumberRow | undefined> {
    const held = await phoneNumberByValue(q, phone);
    if (held && held.user_id !== userId)
      throw new AppError('PHONE_TAKEN', `Phone number ${phone} belongs to another user`);
    return held;
  }

  return {
    async list(f: PhoneNumberFilter) {
      const { rows, total } = await listPhoneNumbers(db, f);
      return { items: rows.map(out), total };
    },

    async mine(userId: string): Promise<PhoneNumberOut[]> {
      await requireUser(db, userId);
      return (await phoneNumbersOf(db, userId)).map(out);
    },

    /**
     * Sets a number for the user. With `verify` (default true) nothing is stored yet: a code goes to the number and
     * `verify` adds it as verified. With `verify: false` the number is added unverified at once.
     */
    async add(userId: string, phone: string, verify: boolean, ip?: string): Promise<Record<string, unknown>> {
      if (!verify) {
        return db.transaction(async (tx) => {
          const user = await requireUser(tx, userId, true);
          const held = await assertAvailable(tx, userId, phone);
          if (held) return out(held);
          const row = await addPhoneNumber(tx, userId, phone, false);
          if (!row) throw new AppError('PHONE_TAKEN', `Phone number ${phone} belongs to another user`);
          await changed(tx, user, 'added', phone);
          return out(row);
        });
      }
      return this.preverify(userId, phone, ip);
    },

    /** Texts a code proving the number (new, or held unverified by the user); answers the otcToken. */
    async preverify(userId: string, phone: string, ip?: string): Promise<Record<string, unknown>> {
      await limitSends(ip, userId, phone);
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const held = await assertAvailable(tx, userId, phone);
        if (held?.verified) throw new AppError('PHONE_ALREADY_VERIFIED', `Phone number ${phone} is already verified`);
        const otcToken = await sendCode(tx, user, 'verify', phone);
        return { otcToken, phoneNumber: phone, ...(held ? { id: held.id } : {}) };
      });
    },

    /** Proves a number with the texted code: a new number is added verified, a held one marked verified. */
    async verify(userId: string, otcToken: string, code: string): Promise<PhoneNumberOut> {
      const outcome = await db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const r = await checkCode(tx, userId, 'verify', otcToken, code);
        if ('error' in r) return r;
        await store.useCode(tx, r.row.id);
        const phone = r.row.phone_number;
        const held = await phoneNumberByValue(tx, phone, true);
        if (held && held.user_id !== userId)
          return { error: new AppError('PHONE_TAKEN', `Phone number ${phone} was taken by another user meanwhile`) };
        const row = held ? await markPhoneNumberVerified(tx, held.id) : await addPhoneNumber(tx, userId, phone, true);
        if (!row) return { error: new AppError('PHONE_TAKEN', `Phone number ${phone} belongs to another user`) };
        await changed(tx, user, held ? 'verified' : 'added', phone);
        return { row: out(row) };
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.row as PhoneNumberOut;
    },

    /**
     * Removing a number: a verified one needs the code texted to it (answers the otcToken; `verifyDelete` removes);
     * an unverified one (never proven) is removed at once.
     */
    async requestDelete(
      userId: string,
      phoneId: string,
      ip?: string,
    ): Promise<{ id: string; deleted: boolean; otcToken?: string }> {
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const row = await ownNumber(tx, userId, phoneId, true);
        if (!row.verified) {
          await removePhoneNumber(tx, row);
          await changed(tx, user, 'removed', row.phone_number);
          return { id: row.id, deleted: true };
        }
        await limitSends(ip, userId, row.phone_number, tx);
        return { otcToken: await sendCode(tx, user, 'delete', row.phone_number), id: row.id, deleted: false };
      });
    },

    async verifyDelete(userId: string, phoneId: string, otcToken: string, code: string): Promise<void> {
      const outcome = await db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const row = await ownNumber(tx, userId, phoneId, true);
        const r = await checkCode(tx, userId, 'delete', otcToken, code);
        if ('error' in r) return r;
        if (r.row.phone_number !== row.phone_number)
          return { error: new AppError('OTC_INVALID', 'The otcToken was issued for another phone number') };
        await store.useCode(tx, r.row.id);
        await removePhoneNumber(tx, row);
        await changed(tx, user, 'removed', row.phone_number);
        return {};
      });
      if ('error' in outcome) throw outcome.error;
    },

    /** The vendor adds a number verified by default (no code). */
    async vendorAdd(userId: string, phone: string): Promise<PhoneNumberOut> {
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const held = await assertAvailable(tx, userId, phone);
        const row = held
          ? held.verified
            ? held
            : await markPhoneNumberVerified(tx, held.id)
          : await addPhoneNumber(tx, userId, phone, true);
        if (!row) throw new AppError('PHONE_TAKEN', `Phone number ${phone} belongs to another user`);
        if (!held?.verified) await changed(tx, user, held ? 'verified' : 'added', phone);
        return out(row);
      });
    },

    async vendorDelete(userId: string, phoneId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        const row = await ownNumber(tx, userId, phoneId, true);
        await removePhoneNumber(tx, row);
        await changed(tx, user, 'removed', row.phone_number);
      });
    },
  };
}
