import { AppError } from '../../../http/errors.ts';
import type { ResourceKind } from './schemas.ts';
import { filterToSql, sortToSql, SqlParams } from './filter.ts';
import { URN } from './schemas.ts';

/** Query parameters of a list (GET) or the body of POST /.search (RFC 7644 3.4.2, 3.4.3). */
export interface ListQuery {
  filter?: string;
  sortBy?: string;
  sortOrder?: string;
  startIndex?: string | number;
  count?: string | number;
  attributes?: string;
  excludedAttributes?: string;
}

export interface ListPlan {
  where: string;
  order: string;
  params: SqlParams;
  startIndex: number;
  count: number;
}

function int(v: string | number | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n)) throw new AppError('SCIM_INVALID_VALUE', `${name} must be an integer`);
  return n;
}

/**
 * Paging per RFC 7644 3.4.2.4: startIndex below 1 is 1; count below 0 is 0 (totalResults only); a count above the
 * configured maximum is clamped to it (the RFC's "SHALL NOT return more than"), and so is a missing count.
 */
export function planList(
  kind: ResourceKind,
  q: ListQuery,
  scope: { tenantId: string; connectionId: string },
  maxResults: number,
): ListPlan {
  const params = new SqlParams([scope.tenantId, scope.connectionId]);
  const where = q.filter !== undefined && q.filter.trim() !== '' ? filterToSql(kind, q.filter, params) : 'TRUE';
  let order = 'r.created_at, r.id';
  if (q.sortBy) {
    const so = (q.sortOrder ?? 'ascending').toLowerCase();
    if (so !== 'ascending' && so !== 'descending')
      throw new AppError('SCIM_INVALID_VALUE', 'sortOrder must be ascending or descending');
    order = `${sortToSql(kind, q.sortBy, params)} ${so === 'descending' ? 'DESC NULLS LAST' : 'ASC NULLS LAST'}, r.created_at, r.id`;
  }
  const startIndex = Math.max(int(q.startIndex, 'startIndex') ?? 1, 1);
  const count = Math.min(Math.max(int(q.count, 'count') ?? maxResults, 0), maxResults);
  return { where, order, params, startIndex, count };
}

/** The SearchRequest body of POST /.search, as list query parameters. */
export function searchBody(body: unknown): ListQuery {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('SCIM_INVALID_SYNTAX', 'The body must be a SearchRequest object');
  const b = body as Record<string, unknown>;
  if (b.schemas !== undefined && (!Array.isArray(b.schemas) || !b.schemas.includes(URN.search)))
    throw new AppError('SCIM_INVALID_SYNTAX', `schemas must contain ${URN.search}`);
  const list = (v: unknown, name: string) => {
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(',');
    if (typeof v === 'string') return v;
    throw new AppError('SCIM_INVALID_VALUE', `${name} must be an array of attribute paths`);
  };
  const str = (v: unknown, name: string) => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw new AppError('SCIM_INVALID_VALUE', `${name} must be a string`);
    return v;
  };
  const num = (v: unknown, name: string) => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' && typeof v !== 'string')
      throw new AppError('SCIM_INVALID_VALUE', `${name} must be an integer`);
    return v;
  };
  return {
    filter: str(b.filter, 'filter'),
    sortBy: str(b.sortBy, 'sortBy'),
    sortOrder: str(b.sortOrder, 'sortOrder'),
    startIndex: num(b.startIndex, 'startIndex'),
    count: num(b.count, 'count'),
    attributes: list(b.attributes, 'attributes'),
    excludedAttributes: list(b.excludedAttributes, 'excludedAttributes'),
  };
}

export function listResponse(resources: unknown[], total: number, startIndex: number) {
  return { schemas: [URN.list], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** Whether a projection needs an attribute that costs a query (groups of users, members of groups). */
export function wants(attr: string, q: ListQuery): boolean {
  const names = (s?: string) =>
    (s ?? '').split(',').map(
      (x) =>
        x
          .trim()
          .toLowerCase()
          .replace(/^urn:.*:(user|group):/, '')
          .split(/[.[]/)[0],
    );
  if (q.attributes) return names(q.attributes).includes(attr.toLowerCase());
  return !names(q.excludedAttributes).includes(attr.toLowerCase());
}
