import { periodicWorker } from '../../jobs/periodic.ts';
import type { Logger } from 'pino';
import type { Db } from '../../storage/db.ts';

/**
 * Housekeeping of the sign-in flows' short-lived state: expired or spent rows are deleted in bounded batches, so the
 * tables do not grow forever. Each rule is one `DELETE … WHERE ctid IN (SELECT ctid … LIMIT n)` repeated until a
 * batch comes back short or the per-run cap is reached (the next run continues), so no statement holds many locks or
 * runs long. Rows that still answer something useful are kept for a grace period: a spent or expired link/code is
 * answered 410 ("expired or used") rather than 400 ("invalid") for 7 days, and an ended session for 7 days.
 */
export interface PurgeRule {
  /** Name in the run's report. */
  name: string;
  table: string;
  /** SQL condition selecting the rows to delete (indexes on these columns: migrations 0021, 0023). */
  where: string;
}

const GRACE = "now() - interval '7 days'";

export const PURGE_RULES: PurgeRule[] = [
  // SSO / social flow state (single use, 10 minutes) and SAML assertion ids past their NotOnOrAfter.
  { name: 'sso_flow_states', table: 'sso_flow_states', where: "expires_at < now() - interval '1 hour'" },
  { name: 'sso_assertions', table: 'sso_assertions', where: 'expires_at < now()' },
  // MFA: pending second steps, sent codes, remembered devices.
  { name: 'mfa_tokens', table: 'mfa_tokens', where: 'expires_at < now()' },
  { name: 'mfa_codes', table: 'mfa_codes', where: 'expires_at < now()' },
  { name: 'mfa_remembered_devices', table: 'mfa_remembered_devices', where: 'expires_at < now()' },
  // One-time links and codes of activation, invitation and passwordless; reset and verification secrets.
  { name: 'one_time_codes', table: 'one_time_codes', where: `expires_at < ${GRACE} OR used_at < ${GRACE}` },
  {
    name: 'password_reset_tokens',
    table: 'password_reset_tokens',
    where: `expires_at < ${GRACE} OR used_at < ${GRACE}`,
  },
  { name: 'recovery_codes', table: 'recovery_codes', where: `expires_at < ${GRACE} OR used_at < ${GRACE}` },
  {
    name: 'email_verification_tokens',
    table: 'email_verification_tokens',
    where: `expires_at < ${GRACE} OR used_at < ${GRACE}`,
  },
  { name: 'phone_codes', table: 'phone_codes', where: `expires_at < ${GRACE} OR used_at < ${GRACE}` },
  // Sessions that ended (expired or revoked) a week ago, with their refresh tokens (ON DELETE CASCADE).
  { name: 'sessions', table: 'sessions', where: `expires_at < ${GRACE} OR revoked_at < ${GRACE}` },
  // Finished message jobs: their payload holds the message variables (codes, links; sealed with the KEK). The
  // delivery record (message_deliveries) keeps status and error without content.
  {
    name: 'message_jobs',
    table: 'jobs',
    where:
      "kind = 'messaging.deliver' AND state IN ('completed', 'failed') AND completed_at < now() - interval '1 hour'",
  },
];

export interface HousekeepingOptions {
  db: Db;
  log: Logger;
  /** Rows per DELETE. */
  batchSize?: number;
  /** DELETE statements per rule and run; what is left waits for the next run. */
  maxBatches?: number;
  /** Between runs (the first runs one minute after start). */
  everyMs?: number;
  rules?: PurgeRule[];
}

export function createHousekeeping(opts: HousekeepingOptions) {
  const { db, log } = opts;
  const batchSize = opts.batchSize ?? 1000;
  const maxBatches = opts.maxBatches ?? 20;
  const everyMs = opts.everyMs ?? 10 * 60_000;
  const rules = opts.rules ?? PURGE_RULES;

  /** Deletes what each rule selects, in bounded batches; answers the rows removed per rule. */
  async function purge(): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    for (const r of rules) {
      let total = 0;
      for (let i = 0; i < maxBatches; i++) {
        const res = await db.query(
          `DELETE FROM ${r.table} WHERE ctid IN (SELECT ctid FROM ${r.table} WHERE ${r.where} LIMIT $1)`,
          [batchSize],
        );
        total += res.rowCount ?? 0;
        if ((res.rowCount ?? 0) < batchSize) break;
      }
      removed[r.name] = total;
    }
    return removed;
  }

  return {
    purge,
    /** A background loop for the job runner (`jobs.attach`): starts and stops with it. */
    worker: periodicWorker(
      () =>
        purge()
          .then((n) => {
            const some = Object.fromEntries(Object.entries(n).filter(([, v]) => v > 0));
            if (Object.keys(some).length) log.info({ removed: some }, 'housekeeping removed expired sign-in state');
          })
          .catch((err) => log.warn({ err: String(err) }, 'housekeeping failed')),
      everyMs,
    ),
  };
}
export type Housekeeping = ReturnType<typeof createHousekeeping>;
