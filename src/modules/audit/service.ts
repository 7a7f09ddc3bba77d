import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { newId } from '../../lib/crypto.ts';
import { iso } from '../../lib/time.ts';
import type { Db } from '../../storage/db.ts';
import { entryHash, GENESIS, type AuditEntryRow } from './chain.ts';
import * as store from './store.ts';

export interface AuditInput {
  tenantId?: string | null;
  actor: { type: string; id?: string | null };
  action: string;
  target?: { type?: string | null; id?: string | null };
  outcome: 'success' | 'failure' | string;
  ip?: string | null;
  userAgent?: string | null;
  severity?: string;
  data?: Record<string, unknown>;
}

export interface AuditDeps {
  db: Db;
  log: Logger;
  /** AUDIT_ENABLED=false: nothing is recorded (a benchmark aid; the routes still answer). */
  enabled: boolean;
  /** Days entries are kept; 0 keeps them forever. */
  retentionDays: number;
}

/** Keys whose values never enter an entry, at any depth (passwords, tokens, codes, secrets, hashes). */
const SECRET_KEY = new RegExp([
  'password', 'passwd', 'passphrase', '^pass$', '^pwd$', 'secret', 'token', 'otp', 'hash', 'api[-_]?key', 'authorization', 'cookie',
  'credential', 'private[-_]?key', 'seed', '^code$', '(verification|mfa|recovery|reset|auth|one[-_]?time|sms|email|backup)[-_]?codes?$',
].join('|'), 'i');

/** Drops secret-looking keys, strips NUL characters (jsonb refuses them) and bounds size; what is left is stored. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(/\u0000/g, '').slice(0, 2048);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 5) return '[depth]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 100)) {
    if (SECRET_KEY.test(k)) continue;
    out[k.replace(/\u0000/g, '')] = redact(v, depth + 1);
  }
  return out;
}

export const toEntry = (r: AuditEntryRow) => ({
  id: r.id,
  createdAt: iso(r.created_at)!,
  tenantId: r.tenant_id,
  actor: { type: r.actor_type, id: r.actor_id },
  action: r.action,
  target: { type: r.target_type, id: r.target_id },
  outcome: r.outcome,
  ip: r.ip,
  userAgent: r.user_agent,
  severity: r.severity,
  data: r.data,
  hash: r.hash,
  prevHash: r.prev_hash,
});
export type AuditEntry = ReturnType<typeof toEntry>;

export interface QueryInput extends store.AuditFilter {
  sortBy?: string;
  sortDirection?: string;
  offset?: number;
  count?: number;
}

export type AuditService = ReturnType<typeof createAuditService>;

const LINGER_MS = 3;

/**
 * The audit log. `record` queues an entry and returns at once; a writer appends queued entries in batches (group
 * commit: one transaction, one chain-head lock per batch), so many requests share one write. Reads (`query`,
 * `export`, `verify`, `stats`) first wait for the queue to drain, so a caller sees its own writes.
 */
export function createAuditService(deps: AuditDeps) {
  const { db, log } = deps;
  const queue: Array<Omit<AuditEntryRow, 'hash' | 'prev_hash'>> = [];
  let writing: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  async function writeBatch(batch: Array<Omit<AuditEntryRow, 'hash' | 'prev_hash'>>): Promise<void> {
    await db.transaction(async (tx) => {
      let prev = (await store.lockHead(tx)).head_hash;
      const rows: AuditEntryRow[] = batch.map((e) => {
        const hash = entryHash(e, prev);
        const row = { ...e, prev_hash: prev, hash };
        prev = hash;
        return row;
      });
      await store.insertEntries(tx, rows, prev);
    });
  }

  async function drain(): Promise<void> {
    while (queue.length) {
      const batch = queue.slice(0, 1000);
      try {
        await writeBatch(batch);
        queue.splice(0, batch.length);
      } catch (err) {
        // Kept in the queue and tried again shortly (the database may be restarting); logged without the entries.
        log.error({ err: String(err), queued: queue.length }, 'audit write failed; retrying');
        retryTimer ??= setTimeout(() => {
          retryTimer = undefined;
          kick();
        }, 1000);
        retryTimer.unref();
        return;
      }
    }
  }

  function kick(): void {
    if (writing || retryTimer) return;
    // A short linger gathers the entries of concurrent requests into one batch (one transaction for all).
    writing = new Promise((r) => setTimeout(r, LINGER_MS)).then(drain).finally(() => {
      writing = undefined;
      if (queue.length) kick();
    });
  }

  function record(e: AuditInput): void {
    if (!deps.enabled) return;
    queue.push({
      id: newId(),
      created_at: new Date(),
      tenant_id: e.tenantId ?? null,
      actor_type: e.actor.type,
      actor_id: e.actor.id ?? null,
      action: e.action.slice(0, 255),
      target_type: e.target?.type ?? null,
      target_id: e.target?.id ?? null,
      outcome: e.outcome,
      ip: e.ip ?? null,
      user_agent: e.userAgent ? e.userAgent.slice(0, 512) : null,
      severity: e.severity ?? (e.outcome === 'success' ? 'Info' : 'Medium'),
      data: (redact(e.data ?? {}) ?? {}) as Record<string, unknown>,
    });
    kick();
  }

  /** Resolves when every entry recorded before the call is written (or the write has failed and is being retried). */
  async function flush(): Promise<void> {
    while (writing) await writing;
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
        if (r.prev_hash !== prev || entryHash(r, r.prev_hash) !== r.hash) return { intact: false, checked, firstBrokenId: r.id };
        prev = r.hash;
      }
      if (rows.length < 1000) break;
      after = Number(rows[rows.length - 1].seq);
    }
    const head = (await db.query<{ head_hash: string }>('SELECT head_hash FROM audit_chain WHERE id = 1')).rows[0].head_hash;
    // The head must be the last entry's hash: entries cut off the end of the chain are detected too.
    if (head !== prev) return { intact: false, checked, firstBrokenId: 'head' };
    return { intact: true, checked };
  }

  return {
    enabled: deps.enabled,
    record,
    flush,
    verify,

    /** Records and waits until written (explicit entries: POST /audits/). */
    async add(e: AuditInput): Promise<void> {
      record(e);
      await flush();
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
      return { data: rows.map(toEntry), total };
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
        auditsCounterByTime: Object.fromEntries(m.byTime.map((r) => [new Date(Number(r.bucket) * 1000).toISOString(), r.n])),
      };
    },

    /** Streams matching entries in chain order, 500 per query: CSV (header row) or JSON lines. */
    export(format: 'csv' | 'jsonl', f: store.AuditFilter): Readable {
      async function* lines() {
        await flush();
        if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\n`;
        for (let after = 0; ;) {
          const rows = await store.page(db, f, after, 500);
          if (rows.length === 0) return;
          after = Number(rows[rows.length - 1].seq);
          yield rows.map((r) => (format === 'csv' ? csvLine(toEntry(r)) : JSON.stringify(toEntry(r)))).join('\n') + '\n';
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
        for (let after = 0; ;) {
          const rows = await store.page(db, f, after, 500);
          if (rows.length === 0) return;
          after = Number(rows[rows.length - 1].seq);
          yield rows.map((r) => {
            const e = toEntry(r);
            return properties.map((p) => csvCell(pick(e, p.name))).join(',');
          }).join('\n') + '\n';
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

const CSV_COLUMNS = ['id', 'createdAt', 'tenantId', 'actorType', 'actorId', 'action', 'targetType', 'targetId', 'outcome', 'ip', 'userAgent', 'severity', 'data', 'hash', 'prevHash'];
const csvCell = (v: unknown): string => {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // Quoted when needed; a leading = + - @ is prefixed with ' so spreadsheets do not run it as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};
const ALIASES: Record<string, (e: AuditEntry) => unknown> = {
  actorType: (e) => e.actor.type, actorId: (e) => e.actor.id, user: (e) => e.actor.id, userId: (e) => e.actor.id,
  targetType: (e) => e.target.type, targetId: (e) => e.target.id,
  email: (e) => e.data.email ?? e.data.identifier, resource: (e) => e.target.type, description: (e) => e.data.description ?? e.action,
};
/** The value of a CSV column `name` for an entry (see exportCsv). */
function pick(e: AuditEntry, name: string): unknown {
  if (ALIASES[name]) return ALIASES[name](e);
  let v: unknown = e;
  for (const part of name.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v !== undefined ? v : e.data[name];
}
function csvLine(e: AuditEntry): string {
  return [e.id, e.createdAt, e.tenantId, e.actor.type, e.actor.id, e.action, e.target.type, e.target.id, e.outcome, e.ip, e.userAgent, e.severity, e.data, e.hash, e.prevHash].map(csvCell).join(',');
}
