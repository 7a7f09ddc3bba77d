import { AppError } from '../http/errors.ts';
import { isUuid } from './pg-errors.ts';

/** Distinct ids in the caller's order, lower-cased; anything that is not a uuid cannot name a row and is dropped. */
export function uuidsInOrder(ids: readonly string[]): string[] {
  return [...new Set(ids.filter(isUuid).map((s) => s.toLowerCase()))];
}

/**
 * User ids of a query parameter sent either way clients send lists: repeated (`ids=a&ids=b`) or comma-joined
 * (`ids=a,b`, the browser SDK's form), or both. 400 naming the parameter unless there are 1 to `max` ids, each a
 * uuid. Answers them distinct, lower-cased, in the caller's order.
 */
export function userIdList(raw: readonly string[], field: string, max: number): string[] {
  const ids = raw
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const fail = (message: string) => new AppError('VALIDATION', message, { fields: [field] });
  if (ids.length === 0) throw fail(`${field} must name at least one user id`);
  if (ids.length > max) throw fail(`${field}: at most ${max} ids (got ${ids.length})`);
  const bad = ids.findIndex((id) => !isUuid(id));
  if (bad >= 0) throw fail(`${field}.${bad} must be a uuid (got "${ids[bad].slice(0, 64)}")`);
  return uuidsInOrder(ids);
}

/** Entries ordered by the position of their `userId` in `order`; stable, so each user's entries keep their order. */
export function byUserOrder<T extends { userId: string }>(entries: T[], order: readonly string[]): T[] {
  const rank = new Map(order.map((id, i) => [id, i]));
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (rank.get(a.e.userId) ?? order.length) - (rank.get(b.e.userId) ?? order.length) || a.i - b.i)
    .map((x) => x.e);
}
