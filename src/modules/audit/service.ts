import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../../storage/db.ts';
import type { Sql } from '../../storage/sql.ts';
import { entryHash, GENESIS } from './chain.ts';
import { AppError } from '../../http/errors.ts';
import { createChainer, type ChainerOptions } from './chainer.ts';
import { entryOf, sdkRow, toEntry, type AuditEntry, type AuditInput } from './entry.ts';
import * as store from './store.ts';

export interface AuditDeps {
  db: Db;
  log: Logger;
  /** AUDIT_ENABLED=false: nothing is recorded (a benchmark aid; the routes still answer). */
  enabled: boolean;
  /** Days entries are kept; 0 keeps them forever. */
  retentionDays: number;
  /** Staged entries chained per transaction (AUDIT_CHAIN_BATCH). */
  chainBatch?: number;
  /** The environment id, answered as the entries' `vendorId`. */
  vendorId?: () => string;
}

export interface QueryInput extends store.AuditFilter {
  sortBy?: string;
  sortDirection?: string;
  offset?: number;
  count?: number;
}

export type AuditService = ReturnType<typeof createAuditService>;

/** How long a read waits for staged entries to be chained before it answers what is chained. */
const READ_WAIT_MS = 2000;

/**
 * The audit log. `record` stages an entry with one plain INSERT (no lock) and resolves when it is stored: the hook
 * awaits it before the response goes out, so an answered write always has its entry. The chainer (chainer.ts, run
 * with the job runner) moves staged entries into the hash chain in batches, off the request path. Reads (`query`,
 * `export`, `verify`, `stats`, `metrics`) first chain what was staged before them (bounded wait), so a caller sees
 * its own writes, whether or not the chainer runs in this process.
 */
export function createAuditService(deps: AuditDeps & { chainer?: ChainerOptions }) {
  const { db, log } = deps;
  const chainer = createChainer(db, log, { batch: deps.chainBatch, ...deps.chainer });

  /**
   * Stages the entry; resolves once it is stored (createdAt = now, the time of the request). A failed INSERT is
   * tried once more; if that fails too, the entry is logged (it holds no secrets: `redact` ran) and AUDIT_UNAVAILABLE
   * is thrown, so the caller is not told "done" for a change whose entry is not stored.
   */
  async function record(e: AuditInput): Promise<void> {
    if (!deps.enabled) return;
    const entry = entryOf(e);
    try {
      await store.stage(db, entry);
    } catch (first) {
      try {
        await store.stage(db, entry);
      } catch (err) {
        log.error({ err: String(err), firstErr: String(first), entry }, 'audit entry could not be stored');
        throw new AppError('AUDIT_UNAVAILABLE');
      }
    }
    chainer.kick();
  }

  /**
   * Chains every entry staged before the call (by any process), waiting at most `maxWaitMs`; past that (a large
   * backlog) the caller goes on with what is chained. A failure is logged, not thrown: a read then answers what is
   * chained (the entries stay staged).
   */
  async function flush(maxWaitMs = READ_WAIT_MS): Promise<void> {
    if (!deps.enabled) return;
    try {
      const upTo = await store.lastStagedSeq(db);
      if (upTo) await chainer.chainUpTo(upTo, Date.now() + maxWaitMs);
    } catch (err) {
      log.warn({ err: String(err) }, 'audit: chaining staged entries before a read failed');
    }
  }

  async function verify(): Promise<{ intact: boolean; checked: number; firstBrokenId?: string }> {
    await flush();
    const anchor = await store.readAnchor(db);
    let prev = anchor.anchor_hash ?? GENESIS;
    let after = Number(anchor.anchor_seq ?? 0);
    let checked = 0;
    for (;;) {
      const rows = await store.page(db, {}, after, 1000);
      for (const r of rows) {
        checked++;
        if (r.prev_hash !== prev || entryHash(r, r.prev_hash) !== r.hash)
          return { intact: false, checked, firstBrokenId: r.id };
        prev = r.hash;
      }
      if (rows.length) after = Number(rows[rows.length - 1].seq);
      if (rows.length === 1000) continue;
      // The head must be the last entry's hash: entries cut off the end of the chain are detected too. The head
      // moves in the same statement as an append, so a head ahead of `prev` with no newer rows is a cut, while a
      // chainer appending meanwhile just gives more rows to check.
      const head = (await db.query<{ head_hash: string }>('SELECT head_hash FROM audit_chain WHERE id = 1')).rows[0]
        .head_hash;
      if (head === prev) return { intact: true, checked };
      if (rows.length === 0 || (await store.page(db, {}, after, 1)).length === 0)
        return { intact: false, checked, firstBrokenId: 'head' };
    }
  }

  return {
    enabled: deps.enabled,
    record,
    /**
     * For a caller that stores the entry in its own statement (a WITH item: one round trip fewer on a hot path): the
     * item as a storage/sql.ts fragment (`item`), or as text (`cte`, parameters from `first`) and its values for a
     * statement that numbers its own. `staged()` once that statement has committed.
     */
    inline(e: AuditInput): {
      item: (onlyIf?: string) => Sql;
      cte: (first: number, onlyIf?: string) => string;
      values: unknown[];
      staged: () => void;
    } {
      const row = entryOf(e);
      return {
        item: (onlyIf) => store.stageItem(row, onlyIf),
        cte: (first, onlyIf) => store.stageItem(row, onlyIf).build(first).text,
        values: store.stageValues(row),
        staged: () => chainer.kick(),
      };
    },
    flush,
    verify,
    /** The chaining loop: attach to the job runner (`jobs.attach(audit.chainer)`). */
    chainer,

    /** Records an explicit entry (POST /audits/); resolves once it is stored. */
    async add(e: AuditInput): Promise<void> {
      await record(e);
    },

    async query(q: QueryInput) {
      await flush();
      const count = Math.min(Math.max(q.count ?? 50, 1), 1000);
      const { rows, total } = await store.query(db, q, {
        sortBy: q.sortBy && store.SORTS[q.sortBy] ? q.sortBy : 'createdAt',
        desc: (q.sortDirection ?? 'desc').toLowerCase() !== 'asc',
        offset: q.offset ?? 0,
        count,
      });
      const vendorId = deps.vendorId?.() ?? '';
      return { data: rows.map((r) => sdkRow(toEntry(r), vendorId)), total };
    },

    async stats(tenantId?: string) {
      await flush();
      const s = await store.stats(db, tenantId);
      return {
        total: s.total,
        totalToday: s.today,
        totalLast7Days: s.week,
        failures: s.failures,
        severeThisWeek: s.severe,
        bySeverity: Object.fromEntries(s.bySeverity.map((r) => [r.severity, r.n])),
        topActions: s.topActions.map((r) => ({ action: r.action, count: r.n })),
      };
    },

    async metrics(from: Date, to: Date, limit: number, bucketSeconds: number) {
      await flush();
      const m = await store.metrics(db, from, to, limit, bucketSeconds);
      return {
        topResources: { data: m.topResources.map((r) => ({ name: r.key, count: r.n })) },
        topTenants: { data: m.topTenants.map((r) => ({ tenantId: r.key, count: r.n })) },
        auditsCounterByTime: Object.fromEntries(
          m.byTime.map((r) => [new Date(Number(r.bucket) * 1000).toISOString(), r.n]),
        ),
      };
    },

    /** Streams matching entries in chain order, 500 per query: CSV (header row) or JSON lines. */
    export(format: 'csv' | 'jsonl', f: store.AuditFilter): Readable {
      async function* lines() {
        await flush();
        if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\n`;
        for (let after = 0; ; ) {
          const rows = await store.page(db, f, after, 500);
          if (rows.length === 0) return;
          after = Number(rows[rows.length - 1].seq);
          yield rows.map((r) => (format === 'csv' ? csvLine(toEntry(r)) : JSON.stringify(toEntry(r)))).join('\n') +
            '\n';
        }
      }
      return Readable.from(lines(), { objectMode: false });
    },

    /**
     * CSV of matching entries in chain order with the caller's columns (`properties`: header `displayName`, value of
     * field `name`: an entry field, a dotted path such as `actor.id`, an alias (`user`, `email`, ...), else `data.<name>`).
     */
    exportCsv(properties: Array<{ displayName: string; name: string }>, f: store.AuditFilter): Readable {
      async function* lines() {
        await flush();
        yield `${properties.map((p) => csvCell(p.displayName)).join(',')}\n`;
        for (let after = 0; ; ) {
          const rows = await store.page(db, f, after, 500);
          if (rows.length === 0) return;
          after = Number(rows[rows.length - 1].seq);
          yield rows
            .map((r) => {
              const e = toEntry(r);
              return properties.map((p) => csvCell(pick(e, p.name))).join(',');
            })
            .join('\n') + '\n';
        }
      }
      return Readable.from(lines(), { objectMode: false });
    },

    /** Retention: removes entries older than the configured days, anchoring the chain at the last removed hash. */
    async applyRetention(now = new Date()): Promise<number> {
      if (!deps.retentionDays) return 0;
      await flush();
      const before = new Date(now.getTime() - deps.retentionDays * 86_400_000);
      let removed = 0;
      for (;;) {
        const n = await db.transaction(async (tx) => {
          await store.lockHead(tx);
          return store.removeOlderThan(tx, before, 5000);
        });
        removed += n;
        if (n < 5000) break;
      }
      return removed;
    },
  };
}

const CSV_COLUMNS = [
  'id',
  'createdAt',
  'tenantId',
  'actorType',
  'actorId',
  'action',
  'targetType',
  'targetId',
  'outcome',
  'ip',
  'userAgent',
  'severity',
  'data',
  'hash',
  'prevHash',
];
const csvCell = (v: unknown): string => {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // Quoted when needed; a leading = + - @ is prefixed with ' so spreadsheets do not run it as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};
const ALIASES: Record<string, (e: AuditEntry) => unknown> = {
  actorType: (e) => e.actor.type,
  actorId: (e) => e.actor.id,
  user: (e) => e.actor.id,
  userId: (e) => e.actor.id,
  targetType: (e) => e.target.type,
  targetId: (e) => e.target.id,
  email: (e) => e.data.email ?? e.data.identifier,
  resource: (e) => e.target.type,
  description: (e) => e.data.description ?? e.action,
};
/** The value of a CSV column `name` for an entry (see exportCsv). */
function pick(e: AuditEntry, name: string): unknown {
  // Own properties only: a column named `__proto__` or `constructor` must not reach Object.prototype.
  if (Object.hasOwn(ALIASES, name)) return ALIASES[name](e);
  let v: unknown = e;
  for (const part of name.split('.'))
    v = v && typeof v === 'object' && Object.hasOwn(v, part) ? (v as Record<string, unknown>)[part] : undefined;
  return v !== undefined ? v : Object.hasOwn(e.data, name) ? e.data[name] : undefined;
}
function csvLine(e: AuditEntry): string {
  return [
    e.id,
    e.createdAt,
    e.tenantId,
    e.actor.type,
    e.actor.id,
    e.action,
    e.target.type,
    e.target.id,
    e.outcome,
    e.ip,
    e.userAgent,
    e.severity,
    e.data,
    e.hash,
    e.prevHash,
  ]
    .map(csvCell)
    .join(',');
}
