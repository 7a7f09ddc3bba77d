import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import * as store from './store.ts';
import type { ConfigRow, PolicyRow } from './store.ts';

/** MFA configuration (environment) and MFA policy (environment or account) — the settings routes. */
export const DEFAULT_POLICY = {
  enforce: 'DontForce',
  allow_remember: false,
  device_expiration_seconds: 1209600,
} as const;

/**
 * The configuration and policy the sign-in paths read (gate, verify) are cached in process per account: writes
 * through this process drop the cache at once (after they commit); other instances see a change within this time, as
 * for the IP restrictions and session policy gates.
 */
export const MFA_SIGN_IN_CACHE_MS = 2000;
/** Invalidation topic of the MFA configuration and policies (src/storage/invalidation.ts). */
export const MFA_TOPIC = 'mfa.policy';

export type Scope = string | undefined;
export interface PolicyBody {
  enforceMFAType?: PolicyRow['enforce'];
  allowRememberMyDevice?: boolean;
  mfaDeviceExpiration?: number;
}
export interface EffectivePolicy {
  enforce: PolicyRow['enforce'];
  allowRemember: boolean;
  deviceExpirationSeconds: number;
}

export const policyRecord = (p: PolicyRow) => ({
  id: p.id,
  tenantId: p.tenant_id,
  enforceMFAType: p.enforce,
  allowRememberMyDevice: p.allow_remember,
  mfaDeviceExpiration: p.device_expiration_seconds,
  createdAt: p.created_at.toISOString(),
  updatedAt: p.updated_at.toISOString(),
});

export const configRecord = (c: ConfigRow) => ({
  authenticationApp: { active: c.authenticator_active, serviceName: c.service_name },
  sms: { active: c.sms_active, tokenLifetimeSeconds: c.sms_ttl_seconds },
  email: { active: c.email_active, tokenLifetimeSeconds: c.email_ttl_seconds, sender: c.email_sender },
});

const STRATEGY_COLUMN: Record<string, keyof ConfigRow> = {
  AuthenticatorApp: 'authenticator_active',
  SMS: 'sms_active',
  EmailCode: 'email_active',
  WebAuthnPlatform: 'webauthn_platform_active',
  WebAuthnCrossPlatform: 'webauthn_cross_platform_active',
};

function columns(body: PolicyBody) {
  const v: Partial<Pick<PolicyRow, 'enforce' | 'allow_remember' | 'device_expiration_seconds'>> = {};
  if (body.enforceMFAType !== undefined) v.enforce = body.enforceMFAType;
  if (body.allowRememberMyDevice !== undefined) v.allow_remember = body.allowRememberMyDevice;
  if (body.mfaDeviceExpiration !== undefined) v.device_expiration_seconds = body.mfaDeviceExpiration;
  return v;
}

/** The lowest remembered-device lifetime; 0 is accepted only where nothing is remembered (it means nothing there). */
export const MIN_DEVICE_EXPIRATION_SECONDS = 60;

/** Checks the policy as it will be stored (the body merged over the current or inherited values). */
function checkStored(v: { allow_remember: boolean; device_expiration_seconds: number }) {
  const s = v.device_expiration_seconds;
  if (s >= MIN_DEVICE_EXPIRATION_SECONDS) return;
  if (s === 0 && !v.allow_remember) return;
  throw new AppError(
    'VALIDATION',
    `mfaDeviceExpiration must be at least ${MIN_DEVICE_EXPIRATION_SECONDS} seconds` +
      (s === 0 ? ' when allowRememberMyDevice is true (0 is accepted only with allowRememberMyDevice false)' : ''),
  );
}

export function createPolicyService(deps: {
  db: Db;
  requireAccount: (q: Queryable, tenantId: string) => Promise<unknown>;
  invalidation?: Invalidation;
}) {
  const { db } = deps;
  const signInCache = createReadCache<{ config: ConfigRow; policy: EffectivePolicy }>({ ttlMs: MFA_SIGN_IN_CACHE_MS });
  deps.invalidation?.subscribe(MFA_TOPIC, () => signInCache.invalidate());
  /**
   * A write's transaction has committed: every account's entry goes (the environment's policy is inherited), here
   * and, notified, on the other instances.
   */
  const changed = async <T>(v: T): Promise<T> => {
    signInCache.invalidate();
    await deps.invalidation?.publish(db, MFA_TOPIC);
    return v;
  };
  /** Serialises writes of one scope and checks that the account is live. */
  async function lockScope(tx: Queryable, scope: Scope) {
    if (scope) await deps.requireAccount(tx, scope);
    await tx.query('SELECT pg_advisory_xact_lock(7243318, hashtext($1))', [scope ?? '']);
  }

  return {
    /**
     * The configuration and the policy that applies to an account, for the sign-in paths: cached (see
     * MFA_SIGN_IN_CACHE_MS); one statement on a miss. The answer is shared: do not change it.
     */
    signInSettings(
      q: Queryable,
      tenantId: string | undefined,
    ): Promise<{ config: ConfigRow; policy: EffectivePolicy }> {
      return signInCache.get(tenantId ?? '', async () => {
        const v = await store.signInSettings(q, tenantId);
        const r = v.policy ?? DEFAULT_POLICY;
        return {
          config: v.config,
          policy: {
            enforce: r.enforce,
            allowRemember: r.allow_remember,
            deviceExpirationSeconds: r.device_expiration_seconds,
          },
        };
      });
    },

    /** The policy that applies to an account: its own, else the environment's, else the built-in default. */
    async effective(q: Queryable, tenantId: string | undefined): Promise<EffectivePolicy> {
      const p = await store.effectivePolicy(q, tenantId);
      const r = p ?? DEFAULT_POLICY;
      return {
        enforce: r.enforce,
        allowRemember: r.allow_remember,
        deviceExpirationSeconds: r.device_expiration_seconds,
      };
    },

    async get(scope: Scope) {
      if (scope) await deps.requireAccount(db, scope);
      const p = await store.effectivePolicy(db, scope);
      if (!p) throw new AppError('POLICY_NOT_FOUND', 'No MFA policy applies to this scope');
      return policyRecord(p);
    },
    async getEnvironment() {
      const p = await store.ownPolicy(db, undefined);
      if (!p) throw new AppError('POLICY_NOT_FOUND', 'The environment has no MFA policy');
      return policyRecord(p);
    },
    /** POST: the scope's own policy, 409 when it has one; fields left out come from the inherited policy. */
    async create(scope: Scope, body: PolicyBody) {
      return changed(
        await db.transaction(async (tx) => {
          await lockScope(tx, scope);
          if (await store.ownPolicy(tx, scope))
            throw new AppError(
              'POLICY_EXISTS',
              'This scope already has its own MFA policy; change it with PATCH or PUT',
            );
          const base = (await store.effectivePolicy(tx, scope)) ?? DEFAULT_POLICY;
          const row = {
            enforce: base.enforce,
            allow_remember: base.allow_remember,
            device_expiration_seconds: base.device_expiration_seconds,
            ...columns(body),
          };
          checkStored(row);
          return policyRecord(await store.insertPolicy(tx, scope, row));
        }),
      );
    },
    /** PATCH: 404 when the scope has no policy of its own. */
    async update(scope: Scope, body: PolicyBody) {
      const v = columns(body);
      if (Object.keys(v).length === 0)
        throw new AppError(
          'EMPTY_UPDATE',
          'Set at least one of enforceMFAType, allowRememberMyDevice, mfaDeviceExpiration',
        );
      return changed(
        await db.transaction(async (tx) => {
          await lockScope(tx, scope);
          const own = await store.ownPolicy(tx, scope);
          if (!own)
            throw new AppError(
              'POLICY_NOT_FOUND',
              'This scope has no MFA policy of its own; create it with POST or PUT',
            );
          checkStored({ ...own, ...v });
          return policyRecord(await store.updatePolicy(tx, own.id, v));
        }),
      );
    },
    /** PUT: create or update the scope's own policy. */
    async upsert(scope: Scope, body: PolicyBody) {
      return changed(
        await db.transaction(async (tx) => {
          await lockScope(tx, scope);
          const own = await store.ownPolicy(tx, scope);
          const v = columns(body);
          if (own) {
            checkStored({ ...own, ...v });
            return policyRecord(Object.keys(v).length ? await store.updatePolicy(tx, own.id, v) : own);
          }
          const base = (await store.effectivePolicy(tx, scope)) ?? DEFAULT_POLICY;
          const row = {
            enforce: base.enforce,
            allow_remember: base.allow_remember,
            device_expiration_seconds: base.device_expiration_seconds,
            ...v,
          };
          checkStored(row);
          return policyRecord(await store.insertPolicy(tx, scope, row));
        }),
      );
    },
    /** Inside the account removal's transaction: the removed account cannot be signed in to, so a stale entry is harmless. */
    forgetAccount: async (q: Queryable, tenantId: string) => {
      await store.forgetAccount(q, tenantId);
      signInCache.invalidate();
    },

    config: (q: Queryable = db) => store.config(q),
    async getConfig() {
      return configRecord(await store.config(db));
    },
    async setConfig(body: {
      authenticationApp?: { active: boolean; serviceName: string };
      sms?: { active: boolean; tokenLifetimeSeconds: number };
      email?: { active: boolean; tokenLifetimeSeconds: number; sender: string };
    }) {
      const v: Partial<ConfigRow> = {};
      if (body.authenticationApp)
        Object.assign(v, {
          authenticator_active: body.authenticationApp.active,
          service_name: body.authenticationApp.serviceName.trim() || 'Gatehouse',
        });
      if (body.sms) Object.assign(v, { sms_active: body.sms.active, sms_ttl_seconds: body.sms.tokenLifetimeSeconds });
      if (body.email)
        Object.assign(v, {
          email_active: body.email.active,
          email_ttl_seconds: body.email.tokenLifetimeSeconds,
          email_sender: body.email.sender.trim(),
        });
      if (Object.keys(v).length === 0)
        throw new AppError('EMPTY_UPDATE', 'Set at least one of authenticationApp, sms, email');
      return configRecord(await changed(await store.updateConfig(db, v)));
    },
    async strategies() {
      const c = await store.config(db);
      return {
        strategies: Object.entries(STRATEGY_COLUMN).map(([strategy, col]) => ({
          strategy,
          isActive: Boolean(c[col]),
        })),
      };
    },
    async setStrategy(body: { strategy: string; isActive: boolean }) {
      const col = STRATEGY_COLUMN[body.strategy];
      if (!col) throw new AppError('MFA_STRATEGY_UNSUPPORTED', `body.strategy ${body.strategy} is not an MFA strategy`);
      await changed(await store.updateConfig(db, { [col]: body.isActive } as Partial<ConfigRow>));
      return {};
    },
  };
}
export type PolicyService = ReturnType<typeof createPolicyService>;
