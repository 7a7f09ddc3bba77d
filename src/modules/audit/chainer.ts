import type { Logger } from 'pino';
import type { Db } from '../../storage/db.ts';
import { entryHash, type AuditEntryRow } from './chain.ts';
import * as store from './store.ts';

export interface ChainerOptions {
  /** Staged rows moved per transaction. */
  batch?: number;
  /** Idle poll: rows staged by other processes, or left by a crash, are picked up within this. */
  pollMs?: number;
  /** After a local write, wait this long (default 100 ms) so the entries of concurrent requests share one chain transaction; they are durable (staged) meanwhile and reads chain for themselves. */
  lingerMs?: number;
  /** At stop, chain what is staged for at most this long; the rest waits for the next start. */
  drainMs?: number;
}

export type Chainer = ReturnType<typeof createChainer>;

/**
 * Moves staged audit entries (audit_staging, written durably by the request) into the hash chain (audit_log).
 *
 * One batch = one transaction: lock the chain head (`audit_chain` row, FOR UPDATE), take the oldest staged rows in
 * staging-seq order (DELETE … RETURNING), compute prev_hash/hash from the head, insert them and move the head. The
 * head lock, held for the whole batch, is what keeps ONE total chain order across processes (row locks such as
 * SKIP LOCKED would let two processes chain interleaved batches from the same head). A crash rolls the batch back:
 * the rows are still staged and the next pass (at the next start at the latest) chains them.
 *
 * Runs with the job runner (`jobs.attach`): `start` chains what a previous run left, then passes follow local writes
 * (`kick`, after a short linger) and an idle poll. Reads call `chainUpTo` themselves (see service.ts), so they do not
 * depend on the loop running.
 */
export function createChainer(db: Db, log: Logger, o: ChainerOptions = {}) {
  const batch = o.batch ?? 1000;
  const pollMs = o.pollMs ?? 1000;
  const lingerMs = o.lingerMs ?? 100;
  const drainMs = o.drainMs ?? 5000;
  let started = false;
  let everStarted = false;
  let timer: NodeJS.Timeout | undefined;
  let due = 0;
  let current: Promise<void> | undefined;
  let again = false;
  let failures = 0;
  let local = false;
  // In-process: one batch at a time (the database lock would serialise them anyway; this spares PGlite's single
  // session a queue of waiting transactions). Per batch, so a read's catch-up interleaves with a long backlog.
  let tail: Promise<unknown> = Promise.resolve();

  async function chainBatch(): Promise<{ n: number; lastSeq: number }> {
    return db.transaction(async (tx) => {
      let prev = (await store.lockHead(tx)).head_hash;
      const staged = await store.takeStaged(tx, batch);
      if (!staged.length) return { n: 0, lastSeq: 0 };
      const rows: AuditEntryRow[] = staged.map(({ seq: _seq, ...e }) => {
        const hash = entryHash(e, prev);
        const row = { ...e, prev_hash: prev, hash };
        prev = hash;
        return row;
      });
      await store.insertEntries(tx, rows, prev);
      return { n: rows.length, lastSeq: Number(staged[staged.length - 1].seq) };
    });
  }

  function oneBatch(): Promise<{ n: number; lastSeq: number }> {
    const run = tail.then(chainBatch, chainBatch);
    tail = run.catch(() => {});
    return run;
  }

  /** Chains batches until nothing is staged, staging seq `upTo` is chained, or `deadline` (epoch ms) has passed. */
  async function chainUpTo(upTo = Infinity, deadline = Infinity): Promise<number> {
    let moved = 0;
    for (;;) {
      const { n, lastSeq } = await oneBatch();
      moved += n;
      if (n < batch || lastSeq >= upTo || Date.now() >= deadline) return moved;
    }
  }

  function schedule(delay: number): void {
    if (!started) return;
    const at = Date.now() + delay;
    if (timer && due <= at) return;
    clearTimeout(timer);
    due = at;
    timer = setTimeout(pass, delay);
    timer.unref();
  }

  function pass(): void {
    timer = undefined;
    if (current) {
      again = true;
      return;
    }
    // An idle poll first looks (one cheap read) instead of taking the chain-head lock for nothing.
    const look = !local;
    local = false;
    current = (look ? store.lastStagedSeq(db).then((seq) => (seq ? chainUpTo() : 0)) : chainUpTo())
      .then(
        () => {
          failures = 0;
        },
        (err) => {
          failures++;
          // The rows stay staged (the batch rolled back); logged without the entries.
          log.error({ err: String(err), failures }, 'audit chaining failed; retrying');
        },
      )
      .finally(() => {
        current = undefined;
        if (again && !failures) {
          again = false;
          schedule(lingerMs);
        } else {
          again = false;
          schedule(failures ? Math.min(pollMs * 2 ** failures, 30_000) : pollMs);
        }
      });
  }

  return {
    chainUpTo,
    /** A local write was staged: chain it soon (unless the loop is stopped or backing off after a failure). */
    kick(): void {
      if (!started || failures) return;
      local = true;
      if (current) again = true;
      else schedule(lingerMs);
    },
    start(): void {
      if (started) return;
      started = true;
      everStarted = true;
      schedule(0);
    },
    /** Stops the loop, then chains what it can within `drainMs`; anything left is chained at the next start. */
    async stop(): Promise<void> {
      started = false;
      clearTimeout(timer);
      timer = undefined;
      await current;
      if (!everStarted) return; // JOBS_ENABLED=false: this process never chains in the background
      try {
        await chainUpTo(Infinity, Date.now() + drainMs);
      } catch (err) {
        log.warn(
          { err: String(err) },
          'audit chaining at shutdown failed; staged entries are chained at the next start',
        );
      }
    },
  };
}
