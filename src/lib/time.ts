/** Timestamps on the wire: ISO-8601 with milliseconds, UTC; null stays null. */
export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
