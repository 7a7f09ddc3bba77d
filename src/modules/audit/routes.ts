import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import {
  AddAudit,
  AuditPage,
  AuditQuery,
  ExportFile,
  ExportQuery,
  Metrics,
  MetricsQuery,
  Stats,
  TenantHeaders,
  Verify,
} from './schema.ts';
import { queryTime } from './query.ts';
import type { AuditService } from './service.ts';
import { auditCompatRoutes } from './compat.routes.ts';

const tags = ['audits'];
const READ = 'fe.secure.read.audits';

/** The account a read covers: a user token sees its own account only; a vendor the query's, else the header's, else all. */
function scope(req: FastifyRequest, queried?: string): string | undefined {
  if (req.auth?.kind === 'user') {
    if (queried && queried !== req.auth.tenantId)
      throw new AppError('MISSING_PERMISSION', "A user token reads its own account's audit log only");
    return req.auth.tenantId;
  }
  return queried || tenantHeader(req);
}

function filters(
  req: FastifyRequest,
  q: {
    tenantId?: string;
    actor?: string;
    action?: string;
    filter?: string;
    outcome?: string;
    severity?: string;
    from?: string;
    to?: string;
  },
) {
  return {
    tenantId: scope(req, q.tenantId),
    actor: q.actor,
    action: q.action,
    filter: q.filter,
    outcome: q.outcome,
    severity: q.severity,
    from: queryTime(q.from, 'from'),
    to: queryTime(q.to, 'to'),
  };
}

/** The audit log (wire.md section 10). Nothing here edits or deletes an entry. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/audits',
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'Query the audit log by account, actor, action and time range, paged ({data, total})',
        headers: TenantHeaders,
        querystring: AuditQuery,
        response: { 200: AuditPage },
      },
    },
    async (req) =>
      audit.query({
        ...filters(req, req.query),
        sortBy: req.query.sortBy,
        sortDirection: req.query.sortDirection,
        offset: req.query.offset,
        count: req.query.count ?? req.query.limit,
      }),
  );

  app.post(
    '/audits',
    {
      config: { ...guard.vendor, audit: false },
      schema: {
        tags,
        summary:
          "Add an entry to the account's audit log (tenant header); extra fields are kept in data, secrets dropped",
        headers: TenantHeaders,
        body: AddAudit,
        response: { 202: Type.Object({ status: Type.String() }) },
      },
    },
    async (req, reply) => {
      const tenantId = tenantHeader(req);
      if (!tenantId) throw new AppError('TENANT_HEADER_REQUIRED');
      const { severity, action, actor, target, outcome, data, ...extra } = req.body;
      await audit.add({
        tenantId,
        severity,
        action: action ?? 'custom',
        actor: actor
          ? { type: actor.type, id: actor.id ?? null }
          : { type: 'vendor', id: req.auth?.kind === 'vendor' ? req.auth.clientId : null },
        target: target ? { type: target.type ?? null, id: target.id ?? null } : undefined,
        outcome: outcome ?? 'success',
        ip: req.ip,
        userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
        data: { ...extra, ...(data ?? {}) },
      });
      return reply.status(202).send({ status: 'accepted' });
    },
  );

  app.get(
    '/audits/stats',
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'Audit statistics of the account (tenant header) or the environment',
        headers: TenantHeaders,
        response: { 200: Stats },
      },
    },
    async (req) => audit.stats(scope(req)),
  );

  app.get(
    '/audits/export',
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary: 'Export matching entries, streamed, in chain order: CSV (default) or JSON lines',
        headers: TenantHeaders,
        querystring: ExportQuery,
        response: { 200: ExportFile },
      },
    },
    async (req, reply) => {
      const format = req.query.format ?? 'csv';
      const stream = audit.export(format, filters(req, req.query));
      reply.header(
        'content-type',
        format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      );
      reply.header('content-disposition', `attachment; filename="audits.${format}"`);
      return reply.send(stream);
    },
  );

  app.get(
    '/audits/verify',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Recompute the hash chain: {intact, checked, firstBrokenId?}',
        response: { 200: Verify },
      },
    },
    async () => audit.verify(),
  );

  app.get(
    '/audits/resources/metrics/v1',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Audit metrics: top resources, top accounts, entries per time bucket',
        querystring: MetricsQuery,
        response: { 200: Metrics },
      },
    },
    async (req) => {
      const to = new Date(req.query.to ?? Date.now());
      const from = new Date(req.query.from ?? to.getTime() - 86_400_000);
      if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
        throw new AppError('VALIDATION', 'querystring.from and querystring.to must be epoch milliseconds');
      return audit.metrics(from, to, req.query.limit ?? 5, req.query.frequency ?? 3600);
    },
  );

  await app.register(auditCompatRoutes, { audit });
};
