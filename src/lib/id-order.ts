import { isUuid } from './pg-errors.ts';

/** Distinct ids in the caller's order, lower-cased; anything that is not a uuid cannot name a row and is dropped. */
export function uuidsInOrder(ids: readonly string[]): string[] {
  return [...new Set(ids.filter(isUuid).map((s) => s.toLowerCase()))];
}

/** Entries ordered by the position of their `userId` in `order`; stable, so each user's entries keep their order. */
export function byUserOrder<T extends { userId: string }>(entries: T[], order: readonly string[]): T[] {
  const rank = new Map(order.map((id, i) => [id, i]));
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (rank.get(a.e.userId) ?? order.length) - (rank.get(b.e.userId) ?? order.length) || a.i - b.i)
    .map((x) => x.e);
}
