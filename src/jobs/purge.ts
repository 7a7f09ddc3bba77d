/**
 * A housekeeping purge rule (src/modules/housekeeping runs them): rows of `table` selected by `where` are deleted in
 * bounded batches. The module that owns the table declares its rules; the composition root hands them all over.
 */
export interface PurgeRule {
  /** Name in the run's report. */
  name: string;
  table: string;
  /** SQL condition selecting the rows to delete (indexes on these columns: migrations 0021, 0023). */
  where: string;
}

/**
 * Spent or expired links and codes are kept this long: they are answered 410 ("expired or used") rather than 400
 * ("invalid") for 7 days, and an ended session is kept as long.
 */
export const PURGE_GRACE = "now() - interval '7 days'";

/** `expires_at` or `ended` (a spent or revoked time column) older than the grace period. */
export const endedBeforeGrace = (ended: string) => `expires_at < ${PURGE_GRACE} OR ${ended} < ${PURGE_GRACE}`;

/**
 * The job queue's rule: finished message jobs. Their payload holds the message variables (codes, links; sealed with
 * the KEK); the delivery record (message_deliveries) keeps status and error without content.
 */
export const jobsPurgeRules: PurgeRule[] = [
  {
    name: 'message_jobs',
    table: 'jobs',
    where:
      "kind = 'messaging.deliver' AND state IN ('completed', 'failed') AND completed_at < now() - interval '1 hour'",
  },
];
