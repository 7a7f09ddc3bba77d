import { AppError } from '../../http/errors.ts';

/** A time query parameter: ISO-8601 or epoch milliseconds; empty is absent; anything else a 400 naming the field. */
export function queryTime(v: string | undefined, field: string): Date | undefined {
  if (v === undefined || v === '') return undefined;
  const d = /^\d+$/.test(v) ? new Date(Number(v)) : new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new AppError('VALIDATION', `querystring.${field} must be an ISO-8601 time or epoch milliseconds`);
  return d;
}
