import type { Logger } from 'pino';
import type { AuditService } from './service.ts';

/**
 * The audit retention job: shortly after start and then every `everyMs`, removes entries older than
 * AUDIT_RETENTION_DAYS (the chain stays verifiable from the recorded anchor). Started and stopped with the job runner.
 */
export function auditRetention(audit: AuditService, log: Logger, everyMs = 3_600_000) {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  const run = () => {
    current = audit.applyRetention()
      .then((n) => void (n && log.info({ removed: n }, 'audit retention removed old entries')))
      .catch((err) => log.warn({ err: String(err) }, 'audit retention failed'))
      .finally(() => (current = undefined));
  };
  return {
    start(): void {
      if (timer) return;
      timer = setTimeout(function tick() {
        run();
        timer = setTimeout(tick, everyMs);
        timer.unref();
      }, 60_000);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await current;
    },
  };
}
