import { sleep } from '../../lib/time.ts';

/**
 * Answers of enumeration-protected requests (passwordless pre-login, password reset, activation resend) must not
 * tell by their timing whether the identifier names a user. The bodies are identical already; the work is not: a
 * known user costs a code insert and a message enqueue, an unknown one only the lookup. Rather than slow every
 * request down to a fixed floor, each flow keeps a moving average (EWMA) of how long its "sent" path takes, and a
 * request that sent nothing (unknown, locked, no phone) waits until that typical time, with ±10 % jitter. The
 * normal path is not slowed; the padding is capped (MAX_PAD_MS) so that an outlier cannot stall unknown answers.
 */
const MAX_PAD_MS = 1000;

export function createEqualizer(opts: { initialMs?: number; alpha?: number } = {}) {
  let typical = opts.initialMs ?? 15;
  const alpha = opts.alpha ?? 0.2;
  return {
    /** Call when the request starts; call the answer with whether a message was sent, before answering. */
    start(): (sent: boolean) => Promise<void> {
      const t0 = performance.now();
      return async (sent: boolean) => {
        const elapsed = performance.now() - t0;
        if (sent) {
          typical += alpha * (Math.min(elapsed, MAX_PAD_MS) - typical);
          return;
        }
        const target = Math.min(typical * (0.9 + Math.random() * 0.2), MAX_PAD_MS);
        if (target > elapsed) await sleep(target - elapsed);
      };
    },
  };
}
export type Equalizer = ReturnType<typeof createEqualizer>;
