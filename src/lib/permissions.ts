/**
 * Permission keys are dotted (`fe.account-settings.delete.account`). In a *held* key, a `*` segment matches any run
 * of one or more segments: `fe.account-settings.*` holds `fe.account-settings.delete.account`, and `*` holds all.
 *
 * Matched segment by segment in O(held segments × required segments) time, never with a backtracking regular
 * expression: a held key of many `*` against a long required key (both may come from a decision request) would
 * otherwise take exponential time and hold the event loop.
 */
export function permissionMatches(held: string, required: string): boolean {
  if (held === required) return true;
  if (!held.includes('*')) return false;
  if (held === '*') return required.length > 0;
  const h = held.split('.');
  const r = required.split('.');
  // reach[j]: the held segments seen so far match the first j required segments.
  let reach = new Array<boolean>(r.length + 1).fill(false);
  reach[0] = true;
  for (const seg of h) {
    const next = new Array<boolean>(r.length + 1).fill(false);
    if (seg === '*') {
      // One or more non-empty segments: j is reachable when some k < j was and segments k..j-1 are all non-empty.
      let any = false;
      for (let j = 1; j <= r.length; j++) {
        any = r[j - 1] !== '' && (any || reach[j - 1]);
        next[j] = any;
      }
    } else {
      for (let j = 1; j <= r.length; j++) next[j] = reach[j - 1] && r[j - 1] === seg;
    }
    reach = next;
    if (!reach.includes(true)) return false;
  }
  return reach[r.length];
}

export function holdsPermission(held: readonly string[], required: string): boolean {
  return held.some((h) => permissionMatches(h, required));
}
