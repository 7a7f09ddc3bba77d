import { loadavg } from 'node:os';
import { QUIET_LOAD } from './agent-config.ts';
import type { BenchOptions } from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// The quiet-machine rule

export interface LoadRecord {
  before: string;
  waitedS: number;
  load1: number;
  quiet: boolean;
}

/** Waiting is bounded per block (10 minutes) and per run (the same 10 minutes shared by every block). */
let waitBudgetS = 600;

export async function quiet(label: string, o: BenchOptions): Promise<LoadRecord> {
  const start = Date.now();
  for (;;) {
    const l1 = loadavg()[0];
    const waited = Math.round((Date.now() - start) / 1000);
    if (l1 <= QUIET_LOAD || o.quick || waited >= waitBudgetS) {
      waitBudgetS = Math.max(0, waitBudgetS - waited);
      const rec = { before: label, waitedS: waited, load1: Number(l1.toFixed(2)), quiet: l1 <= QUIET_LOAD };
      o.log(
        `[load] before ${label}: 1-min load ${rec.load1}${rec.quiet ? '' : ' (ABOVE 1.2: measured anyway)'}${waited ? `, after waiting ${waited} s` : ''}`,
      );
      return rec;
    }
    o.log(`[load] before ${label}: 1-min load ${l1.toFixed(2)} > ${QUIET_LOAD}; waiting 30 s (${waited} s so far)`);
    await new Promise((r) => setTimeout(r, 30_000));
  }
}
