/**
 * An in-process cache of small, rarely written configuration rows that every sign-in or refresh reads (environment
 * settings, session policy, IP restrictions). A write in this process calls `invalidate` AFTER its transaction
 * commits, so this process sees it at once; other processes (several servers on one PostgreSQL) drop it when the
 * owner's notification arrives (invalidation.ts), and within `ttlMs` while their listener is down. A load that was in flight while a write invalidated is returned to its caller but not kept, so a value read
 * before the commit can never be cached after it. Bounded: at most `max` keys, the oldest dropped first.
 */
export interface ReadCache<T> {
  get(key: string, load: () => Promise<T>): Promise<T>;
  /** Drops `key` (or every key) and refuses loads already in flight. Call after the write has committed. */
  invalidate(key?: string): void;
}

export function createReadCache<T>(opts: { ttlMs: number; max?: number }): ReadCache<T> {
  const max = opts.max ?? 10_000;
  const entries = new Map<string, { value: T; until: number }>();
  let generation = 0;
  return {
    async get(key, load) {
      const hit = entries.get(key);
      const now = Date.now();
      if (hit && hit.until > now) return hit.value;
      const started = generation;
      const value = await load();
      if (started === generation && opts.ttlMs > 0) {
        entries.delete(key);
        if (entries.size >= max) entries.delete(entries.keys().next().value as string);
        entries.set(key, { value, until: now + opts.ttlMs });
      }
      return value;
    },
    invalidate(key) {
      generation++;
      if (key === undefined) entries.clear();
      else entries.delete(key);
    },
  };
}
