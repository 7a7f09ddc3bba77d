import { sha256Hex } from '../../lib/crypto.ts';

/** prevHash of the very first entry (and the anchor before any retention run). */
export const GENESIS = '0'.repeat(64);

/** An entry as stored (and hashed). */
export interface AuditEntryRow {
  seq?: number;
  id: string;
  created_at: Date;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  ip: string | null;
  user_agent: string | null;
  severity: string;
  data: Record<string, unknown>;
  hash: string;
  prev_hash: string;
}

/** JSON with object keys sorted at every depth: the same value always gives the same text (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
    .join(',')}}`;
}

/**
 * hash = sha256 hex of the canonical content followed by the previous entry's hash. The content is every stored
 * field but `seq` and `hash` itself, in a fixed order; editing any of them (or removing/reordering entries) breaks
 * the chain from that entry on.
 */
export function entryHash(e: Omit<AuditEntryRow, 'hash' | 'prev_hash' | 'seq'>, prevHash: string): string {
  const content = canonicalJson([
    e.id,
    e.created_at.toISOString(),
    e.tenant_id,
    e.actor_type,
    e.actor_id,
    e.action,
    e.target_type,
    e.target_id,
    e.outcome,
    e.ip,
    e.user_agent,
    e.severity,
    e.data,
  ]);
  return sha256Hex(`${content}\n${prevHash}`);
}
