/**
 * The ordered account ids of broad filters (those the trigram index cannot serve, and those it serves that matched
 * more than `broadMatches` accounts when last counted), kept in memory per data version
 * (migration 0027), so that every page and the exact total of such a filter cost one lookup of the page's rows
 * instead of a pass over every live account. Least recently used first out; bounded by entries and by ids held.
 */
export interface CachedList {
  /** `sum(changes)` of tenant_live_count when the list was read, as text; the list is valid while it is unchanged. */
  version: string;
  /** The matching tenant ids in the list's order; null when there were more than the cache holds (not cached). */
  ids: string[] | null;
  /** When it was read (Date.now()). */
  at: number;
}

export interface ListCacheLimits {
  /** Lists kept (distinct filter, sort and order). */
  maxEntries: number;
  /** Ids kept over all lists (about 80 bytes each for a UUID in V8, so 500,000 ≈ 40 MB at most). */
  maxIds: number;
  /**
   * A filter the trigram index serves is still broad when it matches more accounts than this: counting them costs a
   * pass over all of them on every page (`ics`: 19,828 of 100,000 accounts in the bench). Once a count exceeds it, the filter is answered
   * from the cached ids like a short one (config ACCOUNT_LIST_BROAD_MATCHES).
   */
  broadMatches: number;
}

export const DEFAULT_LIST_CACHE: ListCacheLimits = { maxEntries: 8, maxIds: 500_000, broadMatches: 2000 };
/** Filters remembered as broad (a set of lower-cased filters, cleared when full). */
const MAX_BROAD_FILTERS = 256;

export class ListCache {
  private readonly entries = new Map<string, CachedList>();
  private ids = 0;
  /** Lists being read now, by key: a request that misses while one is read waits for it (see listFromCache). */
  readonly reading = new Map<string, Promise<void>>();
  /** Filters the trigram index serves that were counted above `broadMatches` (lower-cased). */
  private readonly broad = new Set<string>();

  constructor(readonly limits: ListCacheLimits = DEFAULT_LIST_CACHE) {}

  /** The entry for `key`, now the most recently used. */
  get(key: string): CachedList | undefined {
    const e = this.entries.get(key);
    if (e) {
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  /**
   * Keeps `list` (an over-large list is kept as a marker without ids, so the caller knows not to read it again for
   * this version). Entries of any other version are stale for good (the version only grows) and are dropped.
   */
  set(key: string, list: CachedList): void {
    for (const [k, e] of this.entries) if (e.version !== list.version) this.delete(k);
    this.delete(key);
    const kept: CachedList = list.ids && list.ids.length <= this.limits.maxIds ? list : { ...list, ids: null };
    this.entries.set(key, kept);
    this.ids += kept.ids?.length ?? 0;
    for (const [k] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.ids <= this.limits.maxIds) break;
      if (k !== key) this.delete(k);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.ids -= e.ids?.length ?? 0;
  }

  /** Whether `filter` was counted above `broadMatches`. */
  isBroad(filter: string): boolean {
    return this.broad.has(filter.toLowerCase());
  }
  /** Records a count of `filter`'s matches: above `broadMatches`, the filter is broad from now on. */
  counted(filter: string, count: number): void {
    if (count <= this.limits.broadMatches) return;
    if (this.broad.size >= MAX_BROAD_FILTERS) this.broad.clear();
    this.broad.add(filter.toLowerCase());
  }

  /** For tests and the benchmark's report: entries and ids held. */
  size(): { entries: number; ids: number } {
    return { entries: this.entries.size, ids: this.ids };
  }
}
