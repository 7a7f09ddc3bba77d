import { AppError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import type { RotationPolicy, RotationPolicyBody } from './schema.ts';
import * as store from './store.ts';

/**
 * How long a rotation-policy change made by another instance may take to reach this one's sign-ins (this instance's
 * own changes apply at once).
 */
export const ROTATION_POLICY_CACHE_MS = 2000;
/** Invalidation topic of the password-rotation policies (src/storage/invalidation.ts). */
export const ROTATION_TOPIC = 'credentials.rotation';

/** What a scope's first write starts from for the fields its body leaves out (when nothing is inherited). */
export const DEFAULT_ROTATION = Object.freeze({
  isActive: false,
  rotationPeriod: 7_776_000,
  notificationPeriod: 604_800,
});

/** The rotation rule in force for a sign-in: null when passwords do not expire. Periods in seconds. */
export type EffectiveRotation = { rotationPeriod: number; notificationPeriod: number } | null;

/** A password's state under the rule: expired, close to expiry (seconds left), or neither (undefined). */
export type RotationStatus =
  | { expired: true }
  | { expired: false; passwordExpiresIn: number; notificationPeriod: number }
  | undefined;

function toWire(r: store.RotationPolicyRow): RotationPolicy {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    isActive: r.is_active,
    rotationPeriod: r.rotation_period,
    notificationPeriod: r.notification_period,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export type RotationPolicies = ReturnType<typeof createRotationPolicies>;

/**
 * Password rotation (expiry): the policy per environment and per account (an account without its own follows the
 * environment's), and the rule the password sign-in applies, cached in process per account.
 */
/** The user's password hash, null when none: the users module's, given by the wiring (users imports credentials). */
export type PasswordHashOf = (q: Queryable, userId: string) => Promise<string | null | undefined>;

export function createRotationPolicies(deps: { db: Db; passwordHashOf: PasswordHashOf; invalidation?: Invalidation }) {
  const { db, passwordHashOf } = deps;
  const cache = createReadCache<EffectiveRotation>({ ttlMs: ROTATION_POLICY_CACHE_MS });
  deps.invalidation?.subscribe(ROTATION_TOPIC, () => cache.invalidate());

  async function requireScope(q: Queryable, scope: store.Scope, lock = false): Promise<void> {
    if (scope !== null && !(await store.accountIsLive(q, scope, lock)))
      throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${scope}`);
  }

  async function effective(q: Queryable, scope: store.Scope): Promise<EffectiveRotation> {
    const row = await store.findEffective<store.RotationPolicyRow>(q, 'password_rotation_policies', scope);
    return row?.is_active ? { rotationPeriod: row.rotation_period, notificationPeriod: row.notification_period } : null;
  }

  return {
    /** The rule in force for an account (else the environment's), for sign-in and password checks (cached). */
    forAccount: (q: Queryable, tenantId: string | null | undefined): Promise<EffectiveRotation> =>
      cache.get(tenantId ?? '', () => effective(q, tenantId ?? null)),

    /** Where a password set at `changedAt` stands under `rule` at `now`. */
    status(rule: EffectiveRotation, changedAt: Date | string | null | undefined, now = Date.now()): RotationStatus {
      if (!rule || !changedAt) return undefined;
      const left = Math.floor((new Date(changedAt).getTime() + rule.rotationPeriod * 1000 - now) / 1000);
      if (left <= 0) return { expired: true };
      if (rule.notificationPeriod > 0 && left <= rule.notificationPeriod)
        return { expired: false, passwordExpiresIn: left, notificationPeriod: rule.notificationPeriod };
      return undefined;
    },

    /** The policy that applies to the scope (the account's own, else the environment's); 404 when none. */
    async get(scope: store.Scope): Promise<RotationPolicy> {
      await requireScope(db, scope);
      const row = await store.findEffective<store.RotationPolicyRow>(db, 'password_rotation_policies', scope);
      if (!row)
        throw new AppError(
          'POLICY_NOT_FOUND',
          scope === null
            ? 'No password rotation policy is configured'
            : `No password rotation policy applies to account ${scope}`,
        );
      return toWire(row);
    },

    /** The environment-level policy; 404 when none. */
    async vendor(): Promise<RotationPolicy> {
      const row = await store.findOwn<store.RotationPolicyRow>(db, 'password_rotation_policies', null);
      if (!row) throw new AppError('POLICY_NOT_FOUND', 'No environment-level password rotation policy is configured');
      return toWire(row);
    },

    /**
     * Creates or updates the scope's own policy. Fields left out keep their value: the scope's own, else the inherited
     * one, else DEFAULT_ROTATION. The merged result is checked as a whole; nothing is written when it breaks a rule.
     */
    async set(scope: store.Scope, body: RotationPolicyBody): Promise<RotationPolicy> {
      if (body.isActive === undefined && body.rotationPeriod === undefined && body.notificationPeriod === undefined) {
        throw new AppError(
          'EMPTY_UPDATE',
          'The body must set at least one of: isActive, rotationPeriod, notificationPeriod',
        );
      }
      const row = await db.transaction(async (tx) => {
        await requireScope(tx, scope, true);
        await store.lockScope(tx, scope);
        const base = await store.findEffective<store.RotationPolicyRow>(tx, 'password_rotation_policies', scope);
        const v = {
          isActive: body.isActive ?? base?.is_active ?? DEFAULT_ROTATION.isActive,
          rotationPeriod: body.rotationPeriod ?? base?.rotation_period ?? DEFAULT_ROTATION.rotationPeriod,
          notificationPeriod:
            body.notificationPeriod ?? base?.notification_period ?? DEFAULT_ROTATION.notificationPeriod,
        };
        if (
          body.rotationPeriod !== undefined &&
          body.notificationPeriod === undefined &&
          v.notificationPeriod > v.rotationPeriod
        ) {
          // A shorter period given alone: the notice kept from before cannot outlast it.
          v.notificationPeriod = v.rotationPeriod;
        }
        if (v.notificationPeriod > v.rotationPeriod) {
          throw new AppError(
            'VALIDATION',
            `body.notificationPeriod (${v.notificationPeriod}) must not exceed rotationPeriod (${v.rotationPeriod})`,
            { fields: ['notificationPeriod'] },
          );
        }
        return store.upsertRotationPolicy(tx, scope, v);
      });
      cache.invalidate();
      await deps.invalidation?.publish(db, ROTATION_TOPIC);
      return toWire(row);
    },

    /**
     * With rotation in force for the account (else the environment), whether `password` is the user's current one: a
     * password that expires may not be replaced by itself. `verify` checks a password against a stored hash.
     */
    async reusesCurrent(
      q: Queryable,
      tenantId: string | null,
      userId: string,
      password: string,
      verify: (password: string, hash: string) => Promise<boolean>,
    ): Promise<boolean> {
      if (!(await this.forAccount(q, tenantId))) return false;
      const hash = await passwordHashOf(q, userId);
      return hash ? verify(password, hash) : false;
    },

    /** Drops the cached rules (after an account's policies were removed). */
    invalidate: () => cache.invalidate(),
  };
}
