import type { Logger } from 'pino';
import { periodicWorker } from '../../jobs/periodic.ts';
import type { AuditService } from './service.ts';

/**
 * The retention job: shortly after start and then every `everyMs`, removes audit entries older than
 * AUDIT_RETENTION_DAYS (the chain stays verifiable from the recorded anchor), then runs the other retention tasks
 * given (`also`, by name: the event outbox and the webhook delivery log). Started and stopped with the job runner.
 */
export function auditRetention(
  audit: AuditService,
  log: Logger,
  everyMs = 3_600_000,
  also: Record<string, () => Promise<number>> = {},
) {
  const tasks: Array<[string, () => Promise<number>]> = [
    ['audit', () => audit.applyRetention()],
    ...Object.entries(also),
  ];
  return periodicWorker(async () => {
    for (const [name, task] of tasks) {
      try {
        const n = await task();
        if (n) log.info({ removed: n, task: name }, 'retention removed old rows');
      } catch (err) {
        log.warn({ err: String(err), task: name }, 'retention failed');
      }
    }
  }, everyMs);
}
