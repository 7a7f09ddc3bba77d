/** Timestamps on the wire: ISO-8601 with milliseconds, UTC; null stays null. */
export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A timestamp read out of JSON (an ISO string) as a Date; anything else (null, absent) as null. */
export const dateFromJson = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null);
