import { AppError } from '../../http/errors.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import { assertEmailDomainAllowed } from '../restrictions/index.ts';
import type { UsersCore } from './profile.service.ts';
import type { User } from './schema.ts';
import type { UsersDeps } from './service.ts';
import * as store from './store.ts';

/** Emails are stored trimmed and lower-cased (one user per email in the environment). */
const normalise = (email: string) => email.trim().toLowerCase();

/** Operations that find a user by email or change it: lookup, the vendor's email change, the vendor's password check. */
export function createEmailOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;

  return {
    /** The user with this email; with `tenantId`, as a member of that account (404 otherwise), like the get by id. */
    async getByEmail(emailIn: string, tenantId?: string): Promise<User> {
      const email = normalise(emailIn);
      const user = await store.findByEmail(db, email);
      if (!user) throw new AppError('USER_NOT_FOUND', `No user with email ${email}`);
      if (tenantId) await core.requireMembership(db, tenantId, user.id);
      return core.record(db, user, tenantId);
    },

    /**
     * Environment token: gives a user a new email. The new address is unproven, so the user becomes unverified; the
     * same address (any case) changes nothing. Links and codes emailed before are void (user.email_changed). 409 when another user has it; 403 when an account of the user refuses
     * its domain (as creating the user there would). user.updated (`changed`, `previousEmail`) in the same transaction.
     */
    async changeEmail(userId: string, emailIn: string): Promise<User> {
      const email = normalise(emailIn);
      try {
        return await db.transaction(async (tx) => {
          const before = await core.requireUser(tx, userId, true);
          if (before.email === email) return core.record(tx, before);
          if (await store.findByEmail(tx, email))
            throw new AppError('USER_EXISTS', `A user with email ${email} already exists in the environment`);
          for (const m of await store.memberships(tx, userId))
            await assertEmailDomainAllowed(tx, m.tenant_id, email, 'body.email');
          await store.updateUser(tx, userId, { email, verified: false });
          await deps.events?.bus.publish(tx, 'user.email_changed', { userId });
          const changed = before.verified ? ['email', 'verified'] : ['email'];
          await deps.events?.emit(tx, {
            eventKey: 'user.updated',
            tenantId: before.active_tenant_id,
            entity: { type: 'user', id: userId },
            data: { userId, email, previousEmail: before.email, tenantId: before.active_tenant_id, changed },
          });
          return core.record(tx, (await store.findById(tx, userId))!);
        });
      } catch (err) {
        // Two changes to one address at once: the unique index decides, and the loser gets the same 409.
        if (isUniqueViolation(err))
          throw new AppError('USER_EXISTS', `A user with email ${email} already exists in the environment`);
        throw err;
      }
    },

    /**
     * Environment token: is `password` the password of the user with this email? Through the password service (its
     * bounded hashing, every stored format); an unknown email costs one decoy verification and answers false, so the
     * time taken does not tell whether the user exists. Not a sign-in: no failed-attempt count, no lockout, no event.
     * A right password over an imported hash replaces it with argon2id, as a sign-in does (only if the hash is
     * still the one verified). `userId` is for the audit entry's target, not for the answer.
     */
    async verifyPassword(emailIn: string, password: string): Promise<{ isValid: boolean; userId?: string }> {
      const user = await store.findByEmail(db, normalise(emailIn));
      if (!user) {
        await deps.passwords.decoy(password);
        return { isValid: false };
      }
      const { ok, needsRehash } = await deps.passwords.verify(password, user.password_hash);
      if (ok && needsRehash && user.password_hash)
        await store.replacePasswordHash(db, user.id, user.password_hash, await deps.passwords.hash(password));
      return { isValid: ok, userId: user.id };
    },
  };
}
