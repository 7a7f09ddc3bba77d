import { totpCode } from '../../src/modules/mfa/index.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Codes of an authenticator app the test holds. Each use takes the next unused step within ±1 of now (the server
 * accepts a step once), and a code is never made in the last second of a step so it cannot age out in flight.
 */
export class Authenticator {
  used = -Infinity;
  constructor(readonly secret: string) {}
  async code(): Promise<string> {
    while (Date.now() % 30_000 > 29_000) await sleep(100);
    const now = Math.floor(Date.now() / 30_000);
    const step = Math.max(now - 1, this.used + 1);
    if (step > now + 1) throw new Error('three codes used within one step: the test uses this app too often');
    this.used = step;
    return totpCode(this.secret, step);
  }
  /** A code of a step already used (replay). */
  replay(): string {
    return totpCode(this.secret, this.used);
  }
}
