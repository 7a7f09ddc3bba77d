/**
 * Permission keys are dotted (`fe.account-settings.delete.account`). In a *held* key, a `*` segment matches any run
 * of one or more segments: `fe.account-settings.*` holds `fe.account-settings.delete.account`, and `*` holds all.
 */
const compiled = new Map<string, RegExp>();

function patternOf(held: string): RegExp {
  let re = compiled.get(held);
  if (!re) {
    const body = held
      .split('.')
      .map((seg) => (seg === '*' ? '[^.]+(?:\\.[^.]+)*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('\\.');
    re = new RegExp(`^${body}$`);
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(held, re);
  }
  return re;
}

export function permissionMatches(held: string, required: string): boolean {
  if (held === required) return true;
  return held.includes('*') && patternOf(held).test(required);
}

export function holdsPermission(held: readonly string[], required: string): boolean {
  return held.some((h) => permissionMatches(h, required));
}
