import { Type, type TSchema } from 'typebox';

/**
 * The list envelope of wire.md section 5: `_offset` is a 0-based page index; links keep every other query
 * parameter and change only `_offset` (empty string where there is no such page).
 */
export function pageEnvelope<T>(
  items: T[],
  opts: { total: number; limit: number; page: number; path: string; query: Record<string, unknown> },
) {
  const totalPages = Math.ceil(opts.total / opts.limit);
  const link = (page: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) {
      if (v === undefined || k === '_offset') continue;
      // A repeated parameter (`keys=a&keys=b`) stays repeated, so the link asks for the same list.
      if (Array.isArray(v)) for (const x of v) params.append(k, String(x));
      else params.set(k, String(v));
    }
    params.set('_offset', String(page));
    return `${opts.path}?${params.toString()}`;
  };
  const last = Math.max(totalPages - 1, 0);
  return {
    items,
    _metadata: { totalItems: opts.total, totalPages },
    _links: {
      next: opts.page < last ? link(opts.page + 1) : '',
      prev: opts.page > 0 ? link(Math.min(opts.page - 1, last)) : '',
      first: link(0),
      last: link(last),
    },
  };
}

/** The response schema of a `pageEnvelope` answer whose items are `item`. */
export const PageEnvelopeOf = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
    _links: Type.Object(
      { next: Type.String(), prev: Type.String(), first: Type.String(), last: Type.String() },
      { description: "URLs of the pages ('' where there is none)" },
    ),
  });
