import { newId } from '../../lib/crypto.ts';
import { iso } from '../../lib/time.ts';
import type { AuditEntryRow } from './chain.ts';
import type { StagedRow } from './store.ts';

// Audit entries in and out: what an input becomes when staged (redacted, storable text) and how a stored row is answered.

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

/** Keys whose values never enter an entry, at any depth (passwords, tokens, codes, secrets, hashes). */
const SECRET_KEY = new RegExp(
  [
    'password',
    'passwd',
    'passphrase',
    '^pass$',
    '^pwd$',
    'secret',
    'token',
    'otp',
    'hash',
    'api[-_]?key',
    'authorization',
    'cookie',
    'credential',
    'private[-_]?key',
    'seed',
    '^code$',
    '(verification|mfa|recovery|reset|auth|one[-_]?time|sms|email|backup)[-_]?codes?$',
  ].join('|'),
  'i',
);

/** Text PostgreSQL can store: no NUL, no unpaired surrogate (request paths and headers may carry either). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const storable = (s: string, max = Infinity): string =>
  s
    .replace(/\u0000/g, '')
    .slice(0, max)
    .replace(LONE_SURROGATE, '\uFFFD');
const text = (s: string | null | undefined, max: number): string | null => (s == null ? null : storable(s, max));

/** Drops secret-looking keys, strips NUL characters (jsonb refuses them) and bounds size; what is left is stored. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return storable(value, 2048);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 5) return '[depth]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 100)) {
    if (SECRET_KEY.test(k)) continue;
    out[storable(k)] = redact(v, depth + 1);
  }
  return out;
}

/** The row staged for an input: text bounded and made storable, `data` redacted, createdAt = now. */
export function entryOf(e: AuditInput): StagedRow {
  return {
    id: newId(),
    created_at: new Date(),
    tenant_id: text(e.tenantId, 255),
    actor_type: e.actor.type,
    actor_id: text(e.actor.id, 255),
    action: storable(e.action, 255),
    target_type: text(e.target?.type, 255),
    target_id: text(e.target?.id, 1024),
    outcome: e.outcome,
    ip: text(e.ip, 64),
    user_agent: text(e.userAgent, 512),
    severity: e.severity ?? (e.outcome === 'success' ? 'Info' : 'Medium'),
    data: (redact(e.data ?? {}) ?? {}) as Record<string, unknown>,
  };
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

const text0 = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/**
 * An entry as the lists answer it: the wire.md fields plus the browser SDK's AuditRowData fields (additive). Who
 * acted and what was acted on come from the display values the hook stored, else from the entry's own fields.
 */
export function sdkRow(e: AuditEntry, vendorId: string) {
  const d = e.data;
  const user = text0(d.user) ?? text0(d.actorDisplay) ?? `${e.actor.type} ${e.actor.id ?? ''}`.trim();
  const email = text0(d.email) ?? (user.includes('@') ? user : '');
  const route = text0(d.method) && text0(d.path) ? `${d.method} ${d.path}` : undefined;
  const target = e.target.id ? `${e.target.type ?? 'resource'} ${e.target.id}` : undefined;
  return {
    ...e,
    _id: e.id,
    time: e.createdAt,
    updatedAt: e.createdAt,
    resource: text0(d.resource) ?? text0(d.targetDisplay) ?? target ?? route ?? e.action,
    user,
    email,
    ...(email ? { actorMail: email } : {}),
    vendorId,
    // AuditRowData declares json as an array: the entry's data is its one element.
    json: [d],
    __v: 0,
  };
}
