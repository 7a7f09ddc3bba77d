import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EventsService } from '../events/index.ts';
import { AppError, catalogue, type ErrorCode } from '../../http/errors.ts';
import { JobInterrupted, type JobContext, type JobHandler, type JobRunner } from '../../jobs/runner.ts';
import { newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db } from '../../storage/db.ts';
import type { MigrationState } from './schema.ts';
import * as store from './store.ts';

/** Event-loop turns a migration job gives away between chunks (see the loop in `handler.run`). */
const TURNS_BETWEEN_CHUNKS = 8;

/**
 * The kind-neutral part of a migration (accounts now, users later): the request is stored with its job in one
 * transaction; the job handles the items in chunks, each chunk in one transaction that also commits the progress, so
 * a crash resumes at the cursor and no item is handled twice. Repeated keys are rejected here, before the kind's own
 * processing; the kind only turns unique items into rows.
 */

export interface ChunkItem {
  /** 0-based position in the request. */
  index: number;
  /** The item's key (a string item itself, else its key field when that is a string). */
  key: string | null;
  item: unknown;
}

export interface ItemError {
  index: number;
  key: string | null;
  code: ErrorCode;
  message: string;
}

/** Imports the items of one chunk inside its transaction; every item either counts as succeeded or has one error. */
export type ChunkProcessor = (tx: Db, items: ChunkItem[]) => Promise<{ succeeded: number; errors: ItemError[] }>;

export type ErrorKey = 'id' | 'email';

/** An error entry of the status record: `{index, id|email, code, message}`. */
export type StatusItemError<K extends ErrorKey> = { index: number; code: string; message: string } & Record<
  K,
  string | null
>;

export interface MigrationSpec<K extends ErrorKey> {
  kind: store.MigrationKind;
  /** Job kind in the jobs table. */
  jobKind: string;
  /** The request field holding the items (used in messages). */
  field: string;
  /** Item property that identifies an item (a string item is its own key). */
  keyField: string;
  /** Name of the key in an error entry of the status record. */
  errorKey: K;
  maxItems: number;
  /** "account migration": used in the not-found message. */
  label: string;
  process: ChunkProcessor;
}

export interface MigrationStatus<K extends ErrorKey> {
  migrationId: string;
  state: MigrationState;
  total: number;
  succeeded: number;
  failed: number;
  errors: StatusItemError<K>[];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export function toMigrationStatus<K extends ErrorKey>(r: store.MigrationRow): MigrationStatus<K> {
  return {
    migrationId: r.id,
    state: r.state,
    total: r.total,
    succeeded: r.succeeded,
    failed: r.failed,
    errors: r.errors as StatusItemError<K>[],
    createdAt: iso(r.created_at)!,
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
  };
}

export function itemKey(item: unknown, keyField: string): string | null {
  if (typeof item === 'string') return item;
  if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
    const v = (item as Record<string, unknown>)[keyField];
    if (typeof v === 'string') return v;
  }
  return null;
}

/** What PostgreSQL text and jsonb cannot hold: U+0000 and a UTF-16 surrogate without its pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unstorable(v: unknown): boolean {
  if (typeof v === 'string') return UNSTORABLE.test(v);
  if (Array.isArray(v)) return v.some(unstorable);
  if (v !== null && typeof v === 'object')
    return Object.entries(v).some(([k, x]) => UNSTORABLE.test(k) || unstorable(x));
  return false;
}

export function createMigrationEngine<K extends ErrorKey>(
  deps: { db: Db; jobs: Pick<JobRunner, 'enqueue' | 'notify'>; chunkSize: number; events?: EventsService },
  spec: MigrationSpec<K>,
) {
  const { db, jobs } = deps;
  const chunkSize = Math.max(1, Math.floor(deps.chunkSize));

  /** One chunk in the caller's transaction; answers whether the migration is finished. */
  async function step(tx: Db, ctx: JobContext, migrationId: string): Promise<boolean> {
    const m = await store.lockMigration(tx, migrationId);
    if (!m || m.kind !== spec.kind || m.state === 'completed' || m.state === 'failed') return true;
    await ctx.keepLease(tx);
    const items = await store.itemSlice(tx, migrationId, m.cursor, chunkSize);
    const chunk: ChunkItem[] = items.map((item, i) => ({
      index: m.cursor + i,
      key: itemKey(item, spec.keyField),
      item,
    }));

    // The first item with a key claims it; any later one with the same key is rejected, in this chunk or a later one.
    const keys = [...new Set(chunk.map((c) => c.key).filter((k): k is string => k !== null))];
    const earlier = await store.keysBefore(tx, migrationId, m.cursor, spec.keyField, keys);
    const errors: ItemError[] = [];
    const unique: ChunkItem[] = [];
    for (const c of chunk) {
      if (c.key !== null && earlier.has(c.key)) {
        errors.push({
          index: c.index,
          key: c.key,
          code: 'MIGRATION_DUPLICATE_ITEM',
          message: `${spec.keyField} ${c.key} is given by an earlier item of this migration`,
        });
      } else {
        if (c.key !== null) earlier.add(c.key);
        unique.push(c);
      }
    }
    const outcome = unique.length ? await spec.process(tx, unique) : { succeeded: 0, errors: [] };
    errors.push(...outcome.errors);
    if (outcome.succeeded + errors.length !== chunk.length) {
      throw new Error(
        `migration ${migrationId}: ${chunk.length} items at ${m.cursor} but ${outcome.succeeded} imported and ${errors.length} rejected`,
      );
    }
    errors.sort((a, b) => a.index - b.index);
    const cursor = m.cursor + chunk.length;
    const done = chunk.length === 0 || cursor >= m.total;
    await store.recordStep(tx, migrationId, {
      cursor,
      succeeded: outcome.succeeded,
      failed: errors.length,
      errors: errors.map((e) => ({
        index: e.index,
        [spec.errorKey]: e.key,
        code: catalogue[e.code].errorCode,
        message: e.message,
      })),
      done,
    });
    if (done) {
      // The outbox: migration.completed in the transaction of the last step.
      const data = {
        migrationId,
        kind: spec.kind,
        state: 'completed',
        total: m.total,
        succeeded: m.succeeded + outcome.succeeded,
        failed: m.failed + errors.length,
      };
      await deps.events?.emit(tx, {
        eventKey: 'migration.completed',
        tenantId: null,
        entity: { type: 'migration', id: migrationId },
        data,
      });
    }
    return done;
  }

  const handler: JobHandler = {
    async run(ctx) {
      const migrationId = ctx.job.payload.migrationId;
      if (typeof migrationId !== 'string' || !isUuid(migrationId))
        throw new Error(`${spec.jobKind} job without a valid migrationId`);
      for (;;) {
        // Between chunks only: a stopping server hands the job back; the next worker resumes at the cursor.
        if (ctx.signal.aborted) throw new JobInterrupted('stopping');
        if (await ctx.db.transaction((tx) => step(tx, ctx, migrationId))) return;
        // Embedded PGlite answers without real I/O, so a job holds the event loop (and every request) except where
        // it yields, and a request needs several turns to be read, answered and written (a large body arrives in
        // pieces). With one turn per chunk a 1,000-user POST waited several chunks (p50 176 ms behind a 200-user
        // import); a few turns let it through while the session is free. An idle turn costs microseconds.
        for (let i = 0; i < TURNS_BETWEEN_CHUNKS; i++) await nextTurn();
      }
    },
    async onFailed(q, job, error) {
      const migrationId = job.payload.migrationId;
      if (typeof migrationId === 'string' && isUuid(migrationId)) {
        await q.transaction(async (tx) => {
          await store.markFailed(tx, migrationId, error);
          await deps.events?.emit(tx, {
            eventKey: 'migration.completed',
            tenantId: null,
            entity: { type: 'migration', id: migrationId },
            data: { migrationId, kind: spec.kind, state: 'failed' },
          });
        });
      }
    },
  };

  return {
    handler,

    /** Stores the request and its job in one transaction and wakes a worker; the items are checked by the job. */
    async submit(items: unknown[]): Promise<{ migrationId: string }> {
      if (!Array.isArray(items) || items.length < 1 || items.length > spec.maxItems) {
        throw new AppError('VALIDATION', `${spec.field} must hold 1 to ${spec.maxItems} items`);
      }
      // Refused up front (the whole request: it cannot be stored to be looked at item by item).
      const bad = items.findIndex(unstorable);
      if (bad >= 0)
        throw new AppError(
          'VALIDATION',
          `${spec.field}[${bad}] contains U+0000 or an unpaired surrogate (\\u0000, \\ud800-\\udfff), which cannot be stored`,
        );
      const migrationId = newId();
      await db.transaction(async (tx) => {
        await store.insertMigration(tx, { id: migrationId, kind: spec.kind, items });
        await jobs.enqueue(tx, { kind: spec.jobKind, payload: { migrationId } });
      });
      jobs.notify();
      return { migrationId };
    },

    async status(migrationId: string): Promise<MigrationStatus<K>> {
      const row = isUuid(migrationId) ? await store.findMigration(db, migrationId, spec.kind) : undefined;
      if (!row)
        throw new AppError('MIGRATION_NOT_FOUND', `No ${spec.label} with migrationId ${migrationId.slice(0, 100)}`);
      return toMigrationStatus<K>(row);
    },
  };
}

export type MigrationEngine<K extends ErrorKey> = ReturnType<typeof createMigrationEngine<K>>;
