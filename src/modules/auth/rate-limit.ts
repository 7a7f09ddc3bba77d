/**
 * Fixed-window counters in process memory: `hit(key)` counts an attempt and says whether it is over the limit and
 * how many seconds remain in the window. Per process (a fleet behind a balancer multiplies the limit by its size).
 */
export function createRateLimiter(limit: number, windowSeconds: number) {
  const windows = new Map<string, { count: number; resetAt: number }>();
  let lastSweep = Date.now();
  return {
    hit(key: string, now = Date.now()): { limited: boolean; retryAfter: number } {
      if (now - lastSweep > windowSeconds * 1000) {
        for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
        lastSweep = now;
      }
      let w = windows.get(key);
      if (!w || w.resetAt <= now) {
        w = { count: 0, resetAt: now + windowSeconds * 1000 };
        windows.set(key, w);
      }
      w.count++;
      return { limited: w.count > limit, retryAfter: Math.max(1, Math.ceil((w.resetAt - now) / 1000)) };
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
