import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import * as store from './store.ts';

/** At most `limit` in a fixed window of `windowSeconds`. */
export interface Rule {
  limit: number;
  windowSeconds: number;
}

export interface Limited {
  key: string;
  rule: Rule;
}

export type LimitsService = ReturnType<typeof createLimitsService>;

/** One rule over many keys (per address, per identifier…): `hit` counts one for the key and says if it went over. */
export interface RateLimiter {
  hit(key: string, q?: Queryable): Promise<{ limited: boolean; retryAfter: number }>;
}

/**
 * Rate limits counted in PostgreSQL, so every instance of a fleet shares them (docs/operations.md). A store that
 * cannot be reached refuses with 503 rather than letting attempts through uncounted.
 */
export function createLimitsService(deps: { db: Db }) {
  async function run(q: Queryable, count: Limited[], read: Limited[]): Promise<store.CounterRow[]> {
    try {
      return await store.countAndRead(
        q,
        count.map((c) => ({ key: c.key, windowSeconds: c.rule.windowSeconds })),
        read.map((r) => r.key),
      );
    } catch (err) {
      if (err instanceof AppError) throw err;
      // Never let attempts through uncounted: the request is answered 503.
      throw new AppError('LIMITS_UNAVAILABLE');
    }
  }

  const retryAfter = (row: store.CounterRow) =>
    Math.max(1, Math.ceil((new Date(row.window_end).getTime() - Date.now()) / 1000));

  /**
   * A limiter of one rule whose keys live under `namespace`. In a transaction, pass it as `q` (PGlite has one
   * connection): the count then stands or falls with the transaction, which is right for a send the rollback undid.
   */
  function limiter(namespace: string, rule: Rule): RateLimiter {
    return {
      async hit(key, q) {
        const k = `${namespace}:${key}`;
        const [row] = await run(q ?? deps.db, [{ key: k, rule }], []);
        return { limited: row ? row.count > rule.limit : false, retryAfter: row ? retryAfter(row) : 1 };
      },
    };
  }

  return {
    limiter,

    /**
     * Counts an attempt under each of `count` and refuses (429 with Retry-After) when one goes over its limit, or
     * when one of `check` (counted elsewhere, e.g. failures) has already reached its limit. One statement.
     */
    async enforce(q: Queryable | undefined, o: { count?: Limited[]; check?: Limited[] }, message: string) {
      const count = o.count ?? [];
      const check = o.check ?? [];
      const rows = await run(q ?? deps.db, count, check);
      let worst: store.CounterRow | undefined;
      for (const row of rows) {
        const counted = count.find((c) => c.key === row.key);
        const checked = check.find((c) => c.key === row.key);
        const over = (counted && row.count > counted.rule.limit) || (checked && row.count >= checked.rule.limit);
        if (over && (!worst || retryAfter(row) > retryAfter(worst))) worst = row;
      }
      if (worst) {
        const s = retryAfter(worst);
        throw new AppError('RATE_LIMITED', `${message}; retry in ${s} s`, undefined, { 'retry-after': String(s) });
      }
    },

    /** Counts one more under each key (failed attempts), in the caller's transaction when given. One statement. */
    async record(q: Queryable | undefined, items: Limited[]): Promise<void> {
      if (items.length) await run(q ?? deps.db, items, []);
    },
  };
}
