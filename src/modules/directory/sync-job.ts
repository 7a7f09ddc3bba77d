import { isUuid } from '../../lib/pg-errors.ts';
import { recordProgress } from '../../jobs/progress.ts';
import { JobInterrupted, type JobHandler } from '../../jobs/runner.ts';
import * as connections from './connections.store.ts';
import * as store from './scim/store.ts';
import type { Sync } from './scim/sync.ts';

/**
 * The job that puts a directory into user management after `syncToUserManagement` was switched on: one chunk per
 * transaction (lock the next `chunkSize` unlinked directory users with an email after the cursor, make or link their
 * Gatehouse users, recompute their mapped roles, advance the cursor and count in the job's payload). Progress
 * commits with the users it describes, so a crash resumes after the last committed chunk and nobody is done twice
 * (a user done is linked, and the chunk query only takes unlinked ones). The job ends when a chunk comes back short,
 * or at once when the connection is gone or sync was switched off again (the users made so far stay).
 */
export function syncJobHandler(deps: { sync: Sync; chunkSize: number }): JobHandler {
  const chunkSize = Math.max(1, Math.floor(deps.chunkSize));
  return {
    async run(ctx) {
      const { tenantId, connectionId } = ctx.job.payload as { tenantId?: unknown; connectionId?: unknown };
      if (typeof tenantId !== 'string' || typeof connectionId !== 'string' || !isUuid(connectionId))
        throw new Error(`${connections.SYNC_JOB} job without tenantId/connectionId`);
      let cursor = (ctx.job.payload.cursor ?? undefined) as store.SyncCursor | undefined;
      for (;;) {
        if (ctx.signal.aborted) throw new JobInterrupted('stopping');
        const done = await ctx.db.transaction(async (tx) => {
          await ctx.keepLease(tx);
          const c = await connections.get(tx, tenantId, connectionId);
          if (!c || !c.sync_to_user_management) return true;
          const chunk = await store.unlinkedUsers(tx, { tenantId, connectionId }, cursor, chunkSize);
          const facts = deps.sync.accountFacts(tx, c);
          for (const row of chunk.rows) await deps.sync.materialise(tx, c, row, false, { facts, recompute: false });
          await deps.sync.recomputeRoles(tx, c, chunk.rows);
          await recordProgress(tx, ctx.job.id, chunk.rows.length, chunk.cursor);
          cursor = chunk.cursor;
          return chunk.rows.length < chunkSize;
        });
        if (done) return;
        // Embedded PGlite answers without real I/O: one event-loop turn per chunk lets requests in.
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}
