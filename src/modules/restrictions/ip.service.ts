import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import { permissionMatches } from '../../lib/permissions.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import { cachedRange, normalizeClientIp, parseRange, rangeContains } from './ip.ts';
import type { CreateIpRule, IpConfigBody, IpListQuery, IpRule } from './schema.ts';
import * as store from './store.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';

/**
 * How long a change of an account's IP restrictions made by another instance may take to reach this one's sign-in
 * gate. Changes made through this instance apply at once (the cache entry is dropped after the change commits).
 */
export const IP_GATE_CACHE_MS = 2000;

/** Holders of this permission administer the restrictions; a change must leave at least one of them a way in. */
export const ADMIN_PERMISSION = 'fe.secure.write.securityPolicy';

/** Who changes the restrictions: a user of the account signed in from `ip`, or the environment (a backend). */
export type Caller = { kind: 'user'; ip: string } | { kind: 'vendor'; ip: string };

const toRule = (r: store.IpRuleRow): IpRule => ({
  id: r.id,
  ip: r.ip,
  description: r.description,
  strategy: r.strategy,
  isActive: r.is_active,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

type Enforced = NonNullable<Awaited<ReturnType<typeof store.enforced>>>;

/** The rule of `state` that the address falls in, or null. */
function matching(state: Enforced, client: ReturnType<typeof normalizeClientIp>): string | null {
  if (!client) return null;
  return state.rules.find((r) => rangeContains(cachedRange(r.ip), client))?.id ?? null;
}

/** Whether a sign-in from `ip` passes: an allow list must contain it, a block list must not. */
export function admits(state: Enforced | undefined, ip: string | undefined): boolean {
  if (!state) return true;
  const client = normalizeClientIp(ip);
  if (!client) return false;
  const hit = matching(state, client) !== null;
  return state.strategy === 'ALLOW' ? hit : !hit;
}

export type IpRestrictionsService = ReturnType<typeof createIpRestrictionsService>;

/** IP restrictions of an account: rules (addresses and CIDR ranges) on an allow and a block list, one list enforced. */
export interface IpRestrictionsDeps {
  db: Db;
  tenants: TenantsService;
  /** The users and auth modules' subqueries the lockout check reads (they import this module). */
  signInTables: store.SignInTablesSql;
  /** Tells the other instances' gates of a change (key: the account); src/storage/invalidation.ts. */
  invalidation?: Invalidation;
}

/** Invalidation topic of an account's IP restrictions (key: the account id). */
export const IP_TOPIC = 'restrictions.ip';

export function createIpRestrictionsService(deps: IpRestrictionsDeps) {
  const { db } = deps;
  // What the gate enforces per account, for every sign-in and refresh: a statement only on a miss.
  const gateCache = createReadCache<Enforced | undefined>({ ttlMs: IP_GATE_CACHE_MS });
  deps.invalidation?.subscribe(IP_TOPIC, (tenantId) => gateCache.invalidate(tenantId));
  /**
   * Runs a change of `tenantId`'s restrictions, drops the gate's entry once it has committed (or failed), and notifies
   * the other instances of a committed one.
   */
  async function changing<T>(tenantId: string, fn: () => Promise<T>): Promise<T> {
    let out: T;
    try {
      out = await fn();
    } finally {
      gateCache.invalidate(tenantId);
    }
    await deps.invalidation?.publish(db, IP_TOPIC, tenantId);
    return out;
  }
  const account = (q: Queryable, tenantId: string, lock?: 'FOR SHARE') =>
    deps.tenants.requireLive(q, tenantId, 'gatehouse-tenant-id', lock);

  /**
   * Refuses a resulting state that would lock out the caller (a user of the account: their own address) or every
   * administrator: an active allow list without entries, or one that admits none of the addresses the account's
   * administrators signed in from in the last 30 days (when any is known). Runs after the change, in its transaction.
   */
  async function assertNoLockout(tx: Queryable, tenantId: string, caller: Caller): Promise<void> {
    const state = await store.enforced(tx, tenantId);
    if (!state) return;
    if (state.strategy === 'ALLOW' && state.rules.length === 0) {
      throw new AppError(
        'RESTRICTION_LOCKOUT',
        `The allow list of account ${tenantId} has no active entries: enforcing it would refuse every sign-in, administrators included. Add the addresses to allow first, then activate the allow list`,
      );
    }
    if (caller.kind === 'user' && !admits(state, caller.ip)) {
      throw new AppError(
        'RESTRICTION_LOCKOUT',
        `This change would lock you out: your address ${caller.ip} would be refused by the ${state.strategy === 'ALLOW' ? 'allow list (it is not on it)' : 'block list (it is on it)'}. Add your address to the allow list (or remove it from the block list) first`,
        { ip: caller.ip },
      );
    }
    const signIns = await store.adminSignInAddresses(tx, deps.signInTables, tenantId);
    const admins = [...new Set(signIns.filter((r) => permissionMatches(r.key, ADMIN_PERMISSION)).map((r) => r.ip))];
    if (admins.length > 0 && !admins.some((ip) => admits(state, ip))) {
      throw new AppError(
        'RESTRICTION_LOCKOUT',
        `This change would lock every administrator of account ${tenantId} out: none of the ${admins.length} address(es) they signed in from in the last 30 days would be admitted`,
        { adminAddresses: admins.slice(0, 20) },
      );
    }
  }

  async function configOf(q: Queryable, tenantId: string) {
    const c = await store.ipConfig(q, tenantId);
    return { strategy: c?.strategy ?? 'ALLOW', isActive: c?.is_active ?? false };
  }

  return {
    async getConfig(tenantId: string) {
      await account(db, tenantId);
      return configOf(db, tenantId);
    },

    /** Partial: a field left out keeps its value (new accounts start with ALLOW, inactive). */
    async setConfig(tenantId: string, body: IpConfigBody, caller: Caller) {
      return changing(tenantId, () =>
        db.transaction(async (tx) => {
          await account(tx, tenantId, 'FOR SHARE');
          const current = await configOf(tx, tenantId);
          const next = { strategy: body.strategy ?? current.strategy, isActive: body.isActive ?? current.isActive };
          await store.writeIpConfig(tx, tenantId, next.strategy, next.isActive);
          await assertNoLockout(tx, tenantId, caller);
          return next;
        }),
      );
    },

    async list(tenantId: string, q: IpListQuery) {
      await account(db, tenantId);
      const limit = q._limit ?? 50;
      const page = q._offset ?? 0;
      const { rows, total } = await store.listIpRules(db, tenantId, {
        limit,
        page,
        filter: q._filter?.trim() || undefined,
      });
      return { items: rows.map(toRule), total, limit, page };
    },

    /**
     * Adds a rule. The same range on the same list twice is a 409; overlapping ranges (10.0.0.0/8 and 10.1.0.0/16)
     * are accepted: a list is a union, so an overlap changes nothing.
     */
    async create(tenantId: string, body: CreateIpRule, caller: Caller): Promise<IpRule> {
      const range = parseRange(body.ip, 'ip');
      if (body.description !== undefined && /\u0000/.test(body.description))
        throw new AppError('VALIDATION', 'description must not contain NUL characters');
      try {
        return await changing(tenantId, () =>
          db.transaction(async (tx) => {
            await account(tx, tenantId, 'FOR SHARE');
            const row = await store.insertIpRule(tx, {
              tenant_id: tenantId,
              id: newId(),
              ip: range.text,
              description: body.description ?? '',
              strategy: body.strategy,
              is_active: body.isActive ?? true,
            });
            await assertNoLockout(tx, tenantId, caller);
            return toRule(row);
          }),
        );
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError(
            'IP_RULE_EXISTS',
            `${range.text} is already on the ${body.strategy} list of account ${tenantId}`,
            { ip: range.text, strategy: body.strategy },
          );
        throw err;
      }
    },

    async remove(tenantId: string, id: string, caller: Caller): Promise<IpRule> {
      return changing(tenantId, () =>
        db.transaction(async (tx) => {
          await account(tx, tenantId, 'FOR SHARE');
          const row = isUuid(id) ? await store.findIpRule(tx, tenantId, id.toLowerCase()) : undefined;
          if (!row)
            throw new AppError(
              'IP_RULE_NOT_FOUND',
              `No IP restriction with id ${id.slice(0, 64)} in account ${tenantId}`,
            );
          await store.deleteIpRule(tx, tenantId, row.id);
          await assertNoLockout(tx, tenantId, caller);
          return toRule(row);
        }),
      );
    },

    /** `/verify`: would a sign-in from `ip` be admitted now. `/verify/allow` (`allowList`): is `ip` on the active allow list. */
    async verify(tenantId: string, ip: string, allowList = false) {
      await account(db, tenantId);
      const config = await configOf(db, tenantId);
      const client = normalizeClientIp(ip);
      if (allowList) {
        const hit = matching({ strategy: 'ALLOW', rules: await store.activeRules(db, tenantId, 'ALLOW') }, client);
        return {
          ip: client?.ip ?? ip,
          valid: hit !== null,
          isActive: config.isActive,
          strategy: config.strategy,
          matchedRuleId: hit,
        };
      }
      const state = await store.enforced(db, tenantId);
      return {
        ip: client?.ip ?? ip,
        valid: admits(state, ip),
        isActive: config.isActive,
        strategy: config.strategy,
        matchedRuleId: state ? matching(state, client) : null,
      };
    },

    /** Drops the gate's cached state of an account (its restrictions were removed with it). */
    forget: (tenantId: string) => gateCache.invalidate(tenantId),

    /**
     * For sign-in paths outside `auth.login` (API-token exchange and refresh): whether the account's enforced
     * restrictions admit `ip`, from the gate's cache.
     */
    async allows(q: Queryable, tenantId: string, ip: string | undefined): Promise<boolean> {
      return admits(await gateCache.get(tenantId, () => store.enforced(q, tenantId)), ip);
    },

    /**
     * The sign-in gate (createAuth's `gates`, 'ip-restrictions'): sign-in and refresh into an account whose
     * restrictions refuse the client's address are 403 `IP_RESTRICTED`. The enforced state is cached per account
     * (IP_GATE_CACHE_MS; no statement on a hit); rules are parsed once per process.
     */
    async gate(q: Queryable, a: { tenantId: string; client: { ip?: string } }): Promise<void> {
      const state = await gateCache.get(a.tenantId, () => store.enforced(q, a.tenantId));
      if (!admits(state, a.client.ip)) {
        throw new AppError(
          'IP_RESTRICTED',
          `Sign-in to account ${a.tenantId} from ${a.client.ip ?? 'an unknown address'} is not allowed by the account's IP restrictions (${state!.strategy === 'ALLOW' ? 'not on the allow list' : 'on the block list'})`,
        );
      }
    },
  };
}
