import { AppError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type {
  CreateHistoryPolicy,
  CreateLockoutPolicy,
  HistoryPolicy,
  LockoutPolicy,
  UpdateHistoryPolicy,
  UpdateLockoutPolicy,
} from './schema.ts';
import { DEFAULT_LOCKOUT, type Scope } from './service.ts';
import * as store from './store.ts';

function toHistoryPolicy(r: store.HistoryPolicyRow): HistoryPolicy {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    enabled: r.enabled,
    historySize: r.history_size,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

function toLockoutPolicy(r: store.LockoutPolicyRow): LockoutPolicy {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    enabled: r.enabled,
    maxAttempts: r.max_attempts,
    lockDurationMinutes: r.lock_duration_minutes,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

/**
 * The configuration of the password-history and lockout policies, per environment (scope null) and per account: read
 * (the account's own, else the environment's), create (409 when the scope has one), update (the scope's own), and the
 * environment's own. Part of the password service (service.ts), which lends its scope checks.
 */
export function createScopedPolicies(deps: {
  db: Db;
  requireScope: (q: Queryable, scope: Scope, lock?: boolean) => Promise<void>;
  writeScope: <T>(scope: Scope, fn: (tx: Db) => Promise<T>) => Promise<T>;
}) {
  const { db, requireScope, writeScope } = deps;
  return {
    /** The history policy that applies to the scope (the account's own, else the environment's); 404 when none. */
    async getHistoryPolicy(scope: Scope): Promise<HistoryPolicy> {
      await requireScope(db, scope);
      const row = await store.findEffective<store.HistoryPolicyRow>(db, 'password_history_policies', scope);
      if (!row)
        throw new AppError(
          'POLICY_NOT_FOUND',
          scope === null
            ? 'No password history policy is configured'
            : `No password history policy applies to account ${scope}`,
        );
      return toHistoryPolicy(row);
    },

    async createHistoryPolicy(scope: Scope, body: CreateHistoryPolicy): Promise<HistoryPolicy> {
      return writeScope(scope, async (tx) => {
        const row = await store.insertHistoryPolicy(tx, scope, body);
        if (!row)
          throw new AppError(
            'POLICY_EXISTS',
            `${scope === null ? 'The environment' : `Account ${scope}`} already has a password history policy; change it with PATCH`,
          );
        return toHistoryPolicy(row);
      });
    },

    async updateHistoryPolicy(scope: Scope, body: UpdateHistoryPolicy): Promise<HistoryPolicy> {
      if (body.enabled === undefined && body.historySize === undefined)
        throw new AppError('EMPTY_UPDATE', 'The body must set enabled or historySize');
      return writeScope(scope, async (tx) => {
        const own = await store.findOwn<store.HistoryPolicyRow>(tx, 'password_history_policies', scope, true);
        if (!own)
          throw new AppError(
            'POLICY_NOT_FOUND',
            `${scope === null ? 'The environment' : `Account ${scope}`} has no password history policy of its own; create it with POST`,
          );
        return toHistoryPolicy(
          await store.updateHistoryPolicy(tx, own.id, {
            enabled: body.enabled ?? own.enabled,
            historySize: body.historySize ?? own.history_size,
          }),
        );
      });
    },

    /** The environment-level history policy; 404 when none. */
    async vendorHistoryPolicy(): Promise<HistoryPolicy> {
      const row = await store.findOwn<store.HistoryPolicyRow>(db, 'password_history_policies', null);
      if (!row) throw new AppError('POLICY_NOT_FOUND', 'No environment-level password history policy is configured');
      return toHistoryPolicy(row);
    },

    /** The lockout policy that applies to the scope (the account's own, else the environment's). */
    async getLockout(scope: Scope): Promise<LockoutPolicy> {
      await requireScope(db, scope);
      const row = await store.findEffective<store.LockoutPolicyRow>(db, 'lockout_policies', scope);
      if (!row) throw new AppError('POLICY_NOT_FOUND', 'No lockout policy is configured');
      return toLockoutPolicy(row);
    },

    async createLockout(scope: Scope, body: CreateLockoutPolicy): Promise<LockoutPolicy> {
      return writeScope(scope, async (tx) => {
        const row = await store.insertLockoutPolicy(tx, scope, {
          enabled: body.enabled,
          maxAttempts: body.maxAttempts,
          lockDurationMinutes:
            body.lockDurationMinutes === undefined ? DEFAULT_LOCKOUT.lockDurationMinutes : body.lockDurationMinutes,
        });
        if (!row)
          throw new AppError(
            'POLICY_EXISTS',
            `${scope === null ? 'The environment' : `Account ${scope}`} already has a lockout policy; change it with PATCH`,
          );
        return toLockoutPolicy(row);
      });
    },

    async updateLockout(scope: Scope, body: UpdateLockoutPolicy): Promise<LockoutPolicy> {
      if (body.enabled === undefined && body.maxAttempts === undefined && body.lockDurationMinutes === undefined) {
        throw new AppError('EMPTY_UPDATE', 'The body must set enabled, maxAttempts or lockDurationMinutes');
      }
      return writeScope(scope, async (tx) => {
        const own = await store.findOwn<store.LockoutPolicyRow>(tx, 'lockout_policies', scope, true);
        if (!own)
          throw new AppError(
            'POLICY_NOT_FOUND',
            `${scope === null ? 'The environment' : `Account ${scope}`} has no lockout policy of its own; create it with POST`,
          );
        return toLockoutPolicy(
          await store.updateLockoutPolicy(tx, own.id, {
            enabled: body.enabled ?? own.enabled,
            maxAttempts: body.maxAttempts ?? own.max_attempts,
            lockDurationMinutes:
              body.lockDurationMinutes === undefined ? own.lock_duration_minutes : body.lockDurationMinutes,
          }),
        );
      });
    },

    /** The environment-level lockout policy; 404 when none. */
    async vendorLockout(): Promise<LockoutPolicy> {
      const row = await store.findOwn<store.LockoutPolicyRow>(db, 'lockout_policies', null);
      if (!row) throw new AppError('POLICY_NOT_FOUND', 'No environment-level lockout policy is configured');
      return toLockoutPolicy(row);
    },
  };
}
