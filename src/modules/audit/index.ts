export { createAuditService, redact, type AuditService, type AuditInput } from './service.ts';
export { installAudit, type AuditInlineOf, type InlineAudit } from './hook.ts';
export { auditRoutes } from './routes.ts';
export { entryHash, canonicalJson, GENESIS } from './chain.ts';
export { auditRetention } from './retention.ts';
