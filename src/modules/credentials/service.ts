import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { AppError } from '../../http/errors.ts';
import { createLimiter } from '../../lib/limiter.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { isCommonPassword } from './common-passwords.ts';
import { argon2, argon2NeedsRehash, hashArgon2id, hasherFor, HASHERS } from './hashers/index.ts';
import {
  checkPassword,
  codePoints,
  DEFAULT_PASSWORD_POLICY,
  mergePolicy,
  toPasswordConfig,
  type Failure,
  type PasswordPolicy,
} from './policy.ts';
import type { UserEmailsPolicyBody, PasswordConfig, PasswordConfigBody } from './schema.ts';
import * as store from './store.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createRotationPolicies, type PasswordHashOf } from './rotation.ts';
import { getUserEmailsPolicy, setUserEmailsPolicy } from './emails-policy.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { createScopedPolicies } from './scoped-policies.ts';
import type { Bus, LockedUser } from '../events/index.ts';

export interface PasswordServiceDeps {
  db: Db;
  /** Hashes computed at once (PASSWORD_HASH_CONCURRENCY, default the CPUs; decision "Password hashing bounded to the CPUs"). */
  hashConcurrency?: number;
  passwordHashOf: PasswordHashOf;
  /** Where `lockedOut` publishes user.locked_out (the unlock-link notice subscribes, src/context.ts). */
  bus?: Bus;
  /** Cross-instance invalidation of the cached rotation rules (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}

/** The built-in lockout default, used only when the environment row (seeded by the migration) is missing. */
export const DEFAULT_LOCKOUT = Object.freeze({ enabled: true, maxAttempts: 5, lockDurationMinutes: 15 });

/** Where a configuration call acts: an account id, or null for the environment level. */
export type Scope = store.Scope;

export interface ValidateContext {
  /** The account whose policy applies (environment policy when absent). */
  tenantId?: string;
  /** The user whose password history applies (no history check when absent). */
  userId?: string;
  /** The user's email: a password may not contain it or its name part. */
  email?: string;
}

export interface VerifyResult {
  ok: boolean;
  /** True only with `ok`, when the stored hash is not argon2id with the current parameters: store `hash(password)`. */
  needsRehash: boolean;
}

export interface EffectiveLockout {
  enabled: boolean;
  maxAttempts: number;
  /** null: locked until unlocked (or until the password is reset). */
  lockDurationSeconds: number | null;
}

const accountNotFound = (tenantId: string) => new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);

function weak(failures: Failure[]): AppError {
  const detail = failures.map((f) => `${f.message} (${f.rule})`).join('; ');
  return new AppError('WEAK_PASSWORD', `Password does not meet the password policy: it ${detail}`, {
    rules: failures.map((f) => f.rule),
  });
}

export type PasswordService = ReturnType<typeof createPasswordService>;

/**
 * Passwords: hashing and verifying (argon2id, legacy formats through the hasher table), the password policy with
 * its common-password list and history, and the configuration of the password, password-history and lockout
 * policies per environment and per account.
 */
export function createPasswordService(deps: PasswordServiceDeps) {
  const { db } = deps;
  // Every hash (verify, decoy, new hash, history) runs on libuv's pool under this bound, callers beyond it in order.
  const hashing = createLimiter(deps.hashConcurrency ?? availableParallelism());
  const limited = <T>(fn: () => Promise<T>) => hashing.run(fn);
  let decoyHash: Promise<string> | undefined;
  const rotation = createRotationPolicies({
    db,
    passwordHashOf: deps.passwordHashOf,
    invalidation: deps.invalidation,
  });
  const verifyAny = (password: string, h: string) => {
    const hasher = hasherFor(h);
    return hasher ? limited(() => hasher.verify(password, h)) : Promise.resolve(false);
  };

  function decoyStored(): Promise<string> {
    decoyHash ??= limited(() => hashArgon2id(randomBytes(32).toString('base64url'))).catch((err: unknown) => {
      decoyHash = undefined;
      throw err;
    });
    return decoyHash;
  }

  async function decoy(password: string): Promise<void> {
    const stored = await decoyStored();
    await limited(() => argon2.verify(password, stored));
  }

  /** Throws 404 unless the scope is the environment or a live account; in a transaction, `lock` holds the account. */
  async function requireScope(q: Queryable, scope: Scope, lock = false): Promise<void> {
    if (scope !== null && !(await store.accountIsLive(q, scope, lock))) throw accountNotFound(scope);
  }

  async function effectivePasswordPolicy(q: Queryable, scope: Scope): Promise<PasswordPolicy> {
    const row = await store.findEffective<store.PasswordPolicyRow>(q, 'password_policies', scope);
    return row ? store.toPolicy(row) : { ...DEFAULT_PASSWORD_POLICY };
  }

  /** Runs `fn` in a transaction that holds the scope's write lock and (for an account) a share lock on the account. */
  function writeScope<T>(scope: Scope, fn: (tx: Db) => Promise<T>): Promise<T> {
    return db.transaction(async (tx) => {
      await requireScope(tx, scope, true);
      await store.lockScope(tx, scope);
      return fn(tx);
    });
  }

  return {
    /**
     * Every flow that counts failures against the lockout policy (password sign-in, MFA, passwordless, activation and
     * invitation codes) calls this in the transaction that sets the lock: user.locked_out on the bus.
     */
    lockedOut: async (tx: Queryable, user: LockedUser): Promise<void> => deps.bus?.publish(tx, 'user.locked_out', user),
    /** The stored-hash formats this service verifies. */
    hashers: HASHERS,

    /** Password rotation (expiry): its configuration and the rule sign-in applies (rotation.ts). */
    rotation,
    /** The user emails policy (emails-policy.ts). */
    userEmails: {
      get: () => getUserEmailsPolicy(db),
      set: (body: UserEmailsPolicyBody) => setUserEmailsPolicy(db, body),
    },

    /** An argon2id PHC string with the current parameters. */
    hash: (password: string): Promise<string> => limited(() => hashArgon2id(password)),

    /**
     * Checks a password against a stored hash of any known format. A null or unrecognised hash costs one decoy
     * verification and answers `ok: false`, so the time taken does not tell which case it was.
     */
    async verify(password: string, stored: string | null): Promise<VerifyResult> {
      const hasher = stored ? hasherFor(stored) : undefined;
      if (!stored || !hasher) {
        await decoy(password);
        return { ok: false, needsRehash: false };
      }
      const ok = await limited(() => hasher.verify(password, stored));
      return { ok, needsRehash: ok && (hasher !== argon2 || argon2NeedsRehash(stored)) };
    },

    /** Costs what verifying a real argon2id hash costs; for sign-ins of unknown users. */
    decoy,

    /**
     * Checks a new password against the policy of `ctx.tenantId` (else the environment's): length, character classes,
     * the email, the common-password list and, with `ctx.userId`, the last N passwords. Throws WEAK_PASSWORD (400)
     * naming every failed rule (`context.rules`); the history, the costly check, only runs when the rest passed.
     */
    async validate(q: Queryable, password: string, ctx: ValidateContext = {}): Promise<void> {
      const scope = ctx.tenantId ?? null;
      const policy = await effectivePasswordPolicy(q, scope);
      const failures = checkPassword(policy, password, ctx.email);
      if (
        policy.blockPwnedPasswords &&
        codePoints(password) <= policy.maxLength &&
        (await isCommonPassword(password))
      ) {
        failures.push({ rule: 'blockPwnedPasswords', message: 'is one of the 10,000 most common passwords' });
      }
      if (failures.length === 0 && ctx.userId && isUuid(ctx.userId)) {
        const history = await store.findEffective<store.HistoryPolicyRow>(q, 'password_history_policies', scope);
        if (history?.enabled) {
          const hashes = await store.lastHashes(q, ctx.userId, history.history_size);
          const matches = await Promise.all(hashes.map((h) => verifyAny(password, h)));
          if (matches.some(Boolean)) {
            failures.push({
              rule: 'history',
              message: `must not be one of the last ${history.history_size} passwords`,
            });
          }
        }
      }
      if (
        failures.length === 0 &&
        ctx.userId &&
        isUuid(ctx.userId) &&
        (await rotation.reusesCurrent(q, scope, ctx.userId, password, verifyAny))
      ) {
        failures.push({
          rule: 'rotation',
          message: 'must differ from the current password (passwords expire under the password rotation policy)',
        });
      }
      if (failures.length > 0) throw weak(failures);
    },

    /**
     * Records a new password hash in the user's history. Keeps as many as the largest enabled history policy
     * (environment or any account) needs, since a user may belong to several accounts; with no history policy
     * enabled anywhere it keeps none (and drops what was kept).
     */
    async remember(q: Queryable, userId: string, hash: string): Promise<void> {
      await store.pushHistory(q, userId, hash, await store.largestEnabledHistory(q));
    },

    /** Drops a user's password history (for the users module when it removes a user). */
    async forgetUser(q: Queryable, userId: string): Promise<void> {
      await store.deleteHistory(q, userId);
    },

    /** Drops an account's own policies (on account.removed, so a reactivated id starts afresh). */
    async forgetAccount(q: Queryable, tenantId: string): Promise<void> {
      await store.deleteAccountPolicies(q, tenantId);
      rotation.invalidate();
    },

    /** The lockout policy that applies to the account (else the environment's). */
    async lockoutPolicy(q: Queryable, tenantId?: string): Promise<EffectiveLockout> {
      const row = await store.findEffective<store.LockoutPolicyRow>(q, 'lockout_policies', tenantId ?? null);
      const v = row
        ? { enabled: row.enabled, maxAttempts: row.max_attempts, lockDurationMinutes: row.lock_duration_minutes }
        : DEFAULT_LOCKOUT;
      return {
        enabled: v.enabled,
        maxAttempts: v.maxAttempts,
        lockDurationSeconds: v.lockDurationMinutes === null ? null : v.lockDurationMinutes * 60,
      };
    },

    /** The password policy that applies to the account (else the environment's, else the built-in default). */
    async passwordPolicy(q: Queryable, tenantId?: string): Promise<PasswordPolicy> {
      return effectivePasswordPolicy(q, tenantId ?? null);
    },

    // ---- configuration (the routes) ----

    async getPasswordConfig(scope: Scope): Promise<PasswordConfig> {
      await requireScope(db, scope);
      return toPasswordConfig(await effectivePasswordPolicy(db, scope));
    },

    /**
     * Creates or updates the scope's own password policy. Fields left out keep their value: the scope's own, else the
     * inherited one (an account's first write copies the environment policy and applies the body). The merged result
     * is checked as a whole; nothing is written when it breaks a rule.
     */
    async setPasswordConfig(scope: Scope, body: PasswordConfigBody): Promise<PasswordConfig> {
      return writeScope(scope, async (tx) => {
        const base = await effectivePasswordPolicy(tx, scope);
        const { policy, changed, problems } = mergePolicy(base, body);
        if (problems.messages.length > 0)
          throw new AppError('VALIDATION', problems.messages.join('; '), { fields: problems.fields });
        if (!changed) {
          throw new AppError(
            'EMPTY_UPDATE',
            'The body must set at least one of: allowPassphrases, maxLength, minLength, minPhraseLength, minOptionalTestsToPass, blockPwnedPasswords, optionalTests',
          );
        }
        return toPasswordConfig(store.toPolicy(await store.upsertPasswordPolicy(tx, scope, policy)));
      });
    },

    // The password-history and lockout policy configuration (scoped-policies.ts).
    ...createScopedPolicies({ db, requireScope, writeScope }),
  };
}
