/**
 * A first-in, first-out concurrency limit: at most `max` calls of `run` are in progress at once; the others wait in
 * arrival order. Used to bound password hashing to the machine's CPUs (credentials service).
 */
export interface Limiter {
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Calls in progress and calls waiting (for tests and metrics). */
  readonly active: number;
  readonly waiting: number;
}

export function createLimiter(max: number): Limiter {
  if (!Number.isInteger(max) || max < 1) throw new Error(`limiter: max must be a positive integer, got ${max}`);
  let active = 0;
  const queue: (() => void)[] = [];
  const release = () => {
    const next = queue.shift();
    // The slot passes straight to the next caller, so a newcomer cannot overtake the queue.
    if (next) next();
    else active--;
  };
  return {
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (active < max) active++;
      else await new Promise<void>((resolve) => queue.push(resolve));
      try {
        return await fn();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
  };
}
