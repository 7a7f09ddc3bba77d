import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { AuditPage, CsvFile, CsvProperties, TenantHeaders, V1ExportQuery, V2Query } from './schema.ts';
import { queryTime } from './query.ts';
import type { AuditService } from './service.ts';
import type { AuditFilter } from './store.ts';

const tags = ['audits'];
const READ = 'fe.secure.read.audits';

/** `a,b` and repeated parameters alike. */
const list = (v: string[] | undefined) =>
  v
    ?.flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** A user token reads its own account only (any other account named is a 403); a vendor what it names, else the header's account, else all. */
function accounts(req: FastifyRequest, named: string[] | undefined): string[] | undefined {
  if (req.auth?.kind === 'user') {
    const own = req.auth.tenantId;
    if (named?.some((t) => t !== own))
      throw new AppError('MISSING_PERMISSION', "A user token reads its own account's audit log only");
    return [own];
  }
  if (named?.length) return named;
  const header = tenantHeader(req);
  return header ? [header] : undefined;
}

function v2Filter(req: FastifyRequest, q: V2Query): AuditFilter {
  const actions = list(q.actions);
  return {
    tenantIds: accounts(req, list(q.tenant_ids)),
    actors: list(q.users),
    emails: list(q.email),
    action: actions?.length === 1 ? actions[0] : undefined,
    filter: q.filter,
    outcome: q.outcome,
    severity: q.severity,
    from: queryTime(q.created_from, 'created_from'),
    to: queryTime(q.created_to, 'created_to'),
  };
}

function sendCsv(reply: FastifyReply, status: number, stream: NodeJS.ReadableStream) {
  reply
    .status(status)
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', 'attachment; filename="audits.csv"');
  return reply.send(stream);
}

/** The audit routes existing clients call besides the main ones (routes.md "Audits"): CSV exports with chosen columns, the v2 list. */
export const auditCompatRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  const v1Filter = (req: FastifyRequest, q: V1ExportQuery): AuditFilter => {
    const named = q.tenantId ? [q.tenantId] : undefined;
    return {
      tenantIds: accounts(req, named),
      actor: q.actor,
      action: q.action,
      filter: q.filter,
      outcome: q.outcome,
      severity: q.severity,
      from: queryTime(q.from, 'from'),
      to: queryTime(q.to, 'to'),
    };
  };
  for (const path of ['/audits/export/csv', '/audits/export/csv/v2']) {
    app.post(
      path,
      {
        config: { ...guard.any(READ), audit: 'audit.export' },
        schema: {
          tags,
          summary:
            'Export the matching entries (same filters as GET /audits) as CSV with the given columns (properties: displayName = header, name = entry field), streamed in chain order',
          headers: TenantHeaders,
          querystring: V1ExportQuery,
          body: CsvProperties,
          response: { 201: CsvFile },
        },
      },
      async (req, reply) => sendCsv(reply, 201, audit.exportCsv(req.body.properties, v1Filter(req, req.query))),
    );
  }

  app.get(
    '/audits/resources/audits/v2',
    {
      config: guard.any(READ),
      schema: {
        tags,
        summary:
          'Query the audit log (v2): created_from/created_to, tenant_ids, users (actor ids), email, paged ({data, total})',
        headers: TenantHeaders,
        querystring: V2Query,
        response: { 200: AuditPage },
      },
    },
    async (req) => {
      const f = v2Filter(req, req.query);
      const actions = list(req.query.actions);
      if (actions && actions.length > 1)
        throw new AppError('VALIDATION', 'querystring.actions takes one action (or a prefix ending in *)');
      return audit.query({
        ...f,
        sortBy: req.query.sortBy,
        sortDirection: req.query.sortDirection,
        offset: req.query.offset,
        count: req.query.count,
      });
    },
  );

  app.post(
    '/audits/resources/audits/v2/export/csv',
    {
      config: { ...guard.any(READ), audit: 'audit.export' },
      schema: {
        tags,
        summary: 'Export the entries matching the v2 filters as CSV with the given columns, streamed in chain order',
        headers: TenantHeaders,
        querystring: V2Query,
        body: CsvProperties,
        response: { 200: CsvFile },
      },
    },
    async (req, reply) => sendCsv(reply, 200, audit.exportCsv(req.body.properties, v2Filter(req, req.query))),
  );
};
