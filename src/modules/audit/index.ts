export { createAuditService, type AuditService } from './service.ts';
export { redact, type AuditInput } from './entry.ts';
export { installAudit, type AuditInlineOf, type InlineAudit } from './hook.ts';
export { auditRoutes } from './routes.ts';
export { entryHash, canonicalJson, GENESIS } from './chain.ts';
export { auditRetention } from './retention.ts';
