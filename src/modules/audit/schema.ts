import { Type, type Static } from 'typebox';

export const SEVERITIES = ['Info', 'Medium', 'High', 'Critical', 'Error'] as const;
/** Sort keys of the lists; `time` and `updatedAt` (the browser SDK's row fields) sort as createdAt. */
const SORT_KEYS = ['createdAt', 'time', 'updatedAt', 'action', 'actor', 'tenantId', 'severity', 'outcome', 'ip'];

const Ref = Type.Object({
  type: Type.Union([Type.String(), Type.Null()]),
  id: Type.Union([Type.String(), Type.Null()]),
});
export const AuditEntry = Type.Object({
  id: Type.String(),
  createdAt: Type.String(),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  actor: Ref,
  action: Type.String(),
  target: Ref,
  outcome: Type.String(),
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  severity: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  hash: Type.String(),
  prevHash: Type.String(),
});

const filterFields = {
  tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  actor: Type.Optional(Type.String({ maxLength: 255, description: 'actor id, or type:id' })),
  action: Type.Optional(Type.String({ maxLength: 255, description: 'exact action, or a prefix ending in *' })),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 time or epoch milliseconds (inclusive)' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 time or epoch milliseconds (inclusive)' })),
  filter: Type.Optional(
    Type.String({ maxLength: 255, description: 'substring of action, actor id, target id, IP or account' }),
  ),
  outcome: Type.Optional(Type.String({ maxLength: 32 })),
  severity: Type.Optional(Type.String({ maxLength: 32 })),
};
export const AuditQuery = Type.Object({
  ...filterFields,
  sortBy: Type.Optional(Type.Union(SORT_KEYS.map((s) => Type.Literal(s)))),
  sortDirection: Type.Optional(Type.Union(['asc', 'desc', 'ASC', 'DESC'].map((s) => Type.Literal(s)))),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'entries to skip' })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'page size (default 50)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'alias of count' })),
});
export type AuditQuery = Static<typeof AuditQuery>;
/** A listed entry: the wire.md fields, plus the browser SDK's AuditRowData fields (entry.ts sdkRow). */
export const AuditRow = Type.Object({
  ...AuditEntry.properties,
  _id: Type.String({ description: 'the id' }),
  time: Type.String({ description: 'createdAt' }),
  updatedAt: Type.String({ description: 'createdAt (entries never change)' }),
  resource: Type.String({ description: 'what was acted on: its display value, else type and id, else the route' }),
  user: Type.String({ description: "who acted, as displayed (a user's email)" }),
  email: Type.String({ description: "the acting user's email, else empty" }),
  actorMail: Type.Optional(Type.String()),
  vendorId: Type.String({ description: 'the environment id' }),
  json: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: '[data]' }),
  __v: Type.Integer(),
});
export const AuditPage = Type.Object({ data: Type.Array(AuditRow), total: Type.Integer() });

export const ExportQuery = Type.Object({
  ...filterFields,
  format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('jsonl')])),
});
export type ExportQuery = Static<typeof ExportQuery>;

export const AddAudit = Type.Object(
  {
    severity: Type.Union(SEVERITIES.map((s) => Type.Literal(s))),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    actor: Type.Optional(
      Type.Object({
        type: Type.String({ minLength: 1, maxLength: 64 }),
        id: Type.Optional(Type.String({ maxLength: 255 })),
      }),
    ),
    target: Type.Optional(
      Type.Object({
        type: Type.Optional(Type.String({ maxLength: 64 })),
        id: Type.Optional(Type.String({ maxLength: 255 })),
      }),
    ),
    outcome: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
export type AddAudit = Static<typeof AddAudit>;

export const TenantHeaders = Type.Object({ 'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 255 })) });

export const Verify = Type.Object({
  intact: Type.Boolean(),
  checked: Type.Integer(),
  firstBrokenId: Type.Optional(Type.String()),
});

export const MetricsQuery = Type.Object({
  from: Type.Optional(Type.Number({ description: 'epoch milliseconds; default 24 hours ago' })),
  to: Type.Optional(Type.Number({ description: 'epoch milliseconds; default now' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 })),
  frequency: Type.Optional(
    Type.Integer({ minimum: 60, maximum: 86400 * 31, description: 'bucket size in seconds; default 3600' }),
  ),
});

/** Columns of the CSV export routes: header `displayName`, value of entry field `name` (routes.md "Audits"). */
export const CsvProperties = Type.Object({
  properties: Type.Array(
    Type.Object({
      displayName: Type.String({ maxLength: 255 }),
      name: Type.String({ minLength: 1, maxLength: 255 }),
    }),
    { minItems: 1, maxItems: 50 },
  ),
});
export type CsvProperties = Static<typeof CsvProperties>;

/** The query of the v1 list and export routes as existing clients send it (vendorId is accepted and ignored). */
export const V1ExportQuery = Type.Object({
  ...filterFields,
  vendorId: Type.Optional(Type.String({ maxLength: 255 })),
  paginationMode: Type.Optional(Type.String({ maxLength: 32 })),
  sortBy: Type.Optional(Type.String({ maxLength: 32 })),
  sortDirection: Type.Optional(Type.String({ maxLength: 8 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type V1ExportQuery = Static<typeof V1ExportQuery>;

const List = Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 });
/** GET /audits/resources/audits/v2 (and its CSV export): snake_case filters; lists repeat the parameter or use commas. */
export const V2Query = Type.Object({
  created_from: Type.Optional(
    Type.String({ maxLength: 40, description: 'ISO-8601 time or epoch milliseconds (inclusive)' }),
  ),
  created_to: Type.Optional(
    Type.String({ maxLength: 40, description: 'ISO-8601 time or epoch milliseconds (inclusive)' }),
  ),
  tenant_ids: Type.Optional(List),
  users: Type.Optional(List),
  email: Type.Optional(List),
  actions: Type.Optional(List),
  filter: Type.Optional(Type.String({ maxLength: 255 })),
  outcome: Type.Optional(Type.String({ maxLength: 32 })),
  severity: Type.Optional(Type.String({ maxLength: 32 })),
  sortBy: Type.Optional(Type.Union(SORT_KEYS.map((s) => Type.Literal(s)))),
  sortDirection: Type.Optional(Type.Union(['asc', 'desc', 'ASC', 'DESC'].map((s) => Type.Literal(s)))),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type V2Query = Static<typeof V2Query>;

// -- responses of the statistics and export routes --
export const Stats = Type.Object({
  total: Type.Integer(),
  totalToday: Type.Integer(),
  totalLast7Days: Type.Integer(),
  failures: Type.Integer({ description: 'entries with outcome failure' }),
  severeThisWeek: Type.Integer({ description: 'High, Critical and Error entries of the last 7 days' }),
  bySeverity: Type.Record(Type.String(), Type.Integer(), { description: 'entries per severity' }),
  topActions: Type.Array(Type.Object({ action: Type.String(), count: Type.Integer() }), {
    description: 'the 10 most frequent actions',
  }),
});
export const Metrics = Type.Object({
  topResources: Type.Object({
    data: Type.Array(
      Type.Object({ name: Type.String({ description: 'target type, else action' }), count: Type.Integer() }),
    ),
  }),
  topTenants: Type.Object({ data: Type.Array(Type.Object({ tenantId: Type.String(), count: Type.Integer() })) }),
  auditsCounterByTime: Type.Record(Type.String(), Type.Integer(), {
    description: 'entries per bucket, keyed by the bucket start (ISO-8601)',
  }),
});
/** Streamed files (never through the JSON serializer). */
const Streamed = Type.Unsafe<NodeJS.ReadableStream>({ type: 'string' });
const file = (description: string, types: string[]) => ({
  description,
  content: Object.fromEntries(types.map((t) => [t, { schema: Streamed }])),
});
export const CsvFile = file('CSV file (attachment), header row first, entries in chain order', ['text/csv']);
export const ExportFile = file(
  'CSV (format=csv, header row first) or JSON lines (format=jsonl), entries in chain order',
  ['text/csv', 'application/x-ndjson'],
);
