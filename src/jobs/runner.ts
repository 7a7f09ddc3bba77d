import type { Logger } from 'pino';
import { newId } from '../lib/crypto.ts';
import type { Db, Queryable } from '../storage/db.ts';

export interface JobRow {
  id: string;
  kind: string;
  tenant_id: string | null;
  payload: Record<string, unknown>;
  state: 'pending' | 'running' | 'completed' | 'failed';
  attempts: number;
  max_attempts: number;
}

export interface JobContext {
  job: JobRow;
  db: Db;
  /** Aborted when the runner stops; a handler checks it between units of work and returns early. */
  signal: AbortSignal;
  /** Extends the lease inside the handler's own transaction; throws if another worker has taken the job over. */
  keepLease(tx: Queryable): Promise<void>;
}

export interface JobHandler {
  /** Does the work, committing progress in steps so that a crash resumes from the last committed step. */
  run(ctx: JobContext): Promise<void>;
  /** Called once when the job has failed for good (attempts exhausted). */
  onFailed?(db: Db, job: JobRow, error: string): Promise<void>;
}

export class JobInterrupted extends Error {}

export interface RunnerOptions {
  db: Db;
  log: Logger;
  pollMs: number;
  leaseMs: number;
  handlers: Record<string, JobHandler>;
}

export type JobRunner = ReturnType<typeof createJobRunner>;

/**
 * Durable jobs in the `jobs` table. A worker claims one with FOR UPDATE SKIP LOCKED and a lease; a job whose
 * worker died is claimed again once its lease has expired. Failures retry with exponential backoff.
 */
export function createJobRunner(opts: RunnerOptions) {
  const workerId = newId();
  let controller = new AbortController();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function claim(): Promise<JobRow | undefined> {
    const { rows } = await opts.db.query<JobRow>(
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1,
              locked_until = now() + make_interval(secs => $2), started_at = coalesce(started_at, now())
       WHERE id = (
         SELECT id FROM jobs
         WHERE (state = 'pending' AND run_after <= now()) OR (state = 'running' AND locked_until < now())
         ORDER BY run_after, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id, kind, tenant_id, payload, state, attempts, max_attempts`,
      [workerId, opts.leaseMs / 1000],
    );
    return rows[0];
  }

  async function execute(job: JobRow): Promise<void> {
    const handler = opts.handlers[job.kind];
    const ctx: JobContext = {
      job,
      db: opts.db,
      signal: controller.signal,
      async keepLease(tx) {
        const r = await tx.query(
          `UPDATE jobs SET locked_until = now() + make_interval(secs => $3) WHERE id = $1 AND locked_by = $2 AND state = 'running'`,
          [job.id, workerId, opts.leaseMs / 1000],
        );
        if (r.rowCount === 0) throw new JobInterrupted('lease lost');
      },
    };
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler.run(ctx);
      await opts.db.query(
        `UPDATE jobs SET state = 'completed', completed_at = now(), locked_by = NULL, locked_until = NULL WHERE id = $1 AND locked_by = $2`,
        [job.id, workerId],
      );
    } catch (err) {
      if (err instanceof JobInterrupted || controller.signal.aborted) {
        if (!crashed) {
          // Graceful stop: hand the job back at once, without counting the attempt.
          await opts.db
            .query(
              `UPDATE jobs SET state = 'pending', attempts = greatest(attempts - 1, 0), locked_by = NULL, locked_until = NULL WHERE id = $1 AND locked_by = $2`,
              [job.id, workerId],
            )
            .catch(() => {});
        }
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      opts.log.warn({ jobId: job.id, kind: job.kind, attempt: job.attempts, err: message }, 'job failed');
      if (job.attempts >= job.max_attempts) {
        await opts.db.query(
          `UPDATE jobs SET state = 'failed', last_error = $2, completed_at = now(), locked_by = NULL, locked_until = NULL WHERE id = $1`,
          [job.id, message],
        );
        await handler
          ?.onFailed?.(opts.db, job, message)
          .catch((e) => opts.log.error({ err: e }, 'job onFailed hook failed'));
      } else {
        const backoff = Math.min(2 ** job.attempts, 300);
        await opts.db.query(
          `UPDATE jobs SET state = 'pending', last_error = $2, run_after = now() + make_interval(secs => $3), locked_by = NULL, locked_until = NULL WHERE id = $1`,
          [job.id, message, backoff],
        );
      }
    }
  }

  let crashed = false;
  const attached: Array<{ start(): void; stop(): Promise<void> }> = [];

  async function runLoop(): Promise<void> {
    while (running) {
      let job: JobRow | undefined;
      try {
        job = await claim();
      } catch (err) {
        if (!running) break;
        opts.log.error({ err }, 'job claim failed');
      }
      if (job) {
        await execute(job);
        // Let queued HTTP work run between jobs: on PGlite no statement does real I/O, so a busy worker could starve it.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, opts.pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    /** Adds a job in the caller's transaction, so it exists iff the caller's change committed. */
    async enqueue(
      tx: Queryable,
      job: { kind: string; payload?: Record<string, unknown>; tenantId?: string; maxAttempts?: number },
    ): Promise<string> {
      const id = newId();
      await tx.query('INSERT INTO jobs (id, kind, tenant_id, payload, max_attempts) VALUES ($1, $2, $3, $4, $5)', [
        id,
        job.kind,
        job.tenantId ?? null,
        JSON.stringify(job.payload ?? {}),
        job.maxAttempts ?? 5,
      ]);
      return id;
    },
    /** Nudges an idle worker to look for work now (after an enqueue has committed). */
    notify(): void {
      wake?.();
    },
    /** Another background loop (the webhook dispatcher, maintenance) that starts and stops with this runner. */
    attach(worker: { start(): void; stop(): Promise<void> }): void {
      attached.push(worker);
      if (running) worker.start();
    },
    start(): void {
      if (running) return;
      running = true;
      crashed = false;
      controller = new AbortController();
      loop = runLoop();
      for (const w of attached) w.start();
    },
    /** Graceful: the current job stops at its next step and is handed back; resolves when the worker is idle. */
    async stop(): Promise<void> {
      running = false;
      controller.abort();
      wake?.();
      await Promise.all([loop, ...attached.map((w) => w.stop())]);
    },
    /** Test aid that behaves like a killed process: stops at the next step and keeps the lease, releasing nothing. */
    async crash(): Promise<void> {
      crashed = true;
      await this.stop();
    },
  };
}
