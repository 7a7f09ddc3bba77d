/**
 * The siteverify protocol of Google reCAPTCHA (also spoken by hCaptcha and Cloudflare Turnstile): POST
 * `application/x-www-form-urlencoded` `secret=…&response=<token>&remoteip=…`, answered with JSON
 * `{success, score?, action?, challenge_ts?, hostname?, 'error-codes'?}`.
 *
 * Failure modes: the provider's verdict (`answered`, success or not), or `unavailable` when it could not be had (network
 * error, timeout, a non-2xx status, an answer that is not that JSON). Never throws. Neither the secret nor the token
 * appears in what it returns.
 */
export type SiteverifyResult =
  | { kind: 'answered'; success: boolean; score?: number; action?: string; hostname?: string; errorCodes: string[] }
  | { kind: 'unavailable'; reason: string };

/** How long a verification may take before the provider counts as unavailable. */
export const SITEVERIFY_TIMEOUT_MS = 5000;
const MAX_ANSWER = 64 * 1024;

export async function siteverify(
  url: string,
  secret: string,
  token: string,
  remoteip: string | undefined,
  timeoutMs = SITEVERIFY_TIMEOUT_MS,
): Promise<SiteverifyResult> {
  const form = new URLSearchParams({ secret, response: token });
  if (remoteip) form.set('remoteip', remoteip);
  let text: string;
  let status: number;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const name = (err as Error)?.name;
    return {
      kind: 'unavailable',
      reason:
        name === 'TimeoutError' || name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : `request failed (${(err as Error)?.message ?? 'network error'})`,
    };
  }
  if (status < 200 || status > 299) return { kind: 'unavailable', reason: `HTTP ${status}` };
  if (text.length > MAX_ANSWER) return { kind: 'unavailable', reason: 'answer too large' };
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'unavailable', reason: 'answer is not JSON' };
  }
  if (!body || typeof body !== 'object' || typeof body.success !== 'boolean')
    return { kind: 'unavailable', reason: 'answer lacks a boolean "success"' };
  const codes = Array.isArray(body['error-codes'])
    ? body['error-codes'].filter((c): c is string => typeof c === 'string').slice(0, 10)
    : [];
  return {
    kind: 'answered',
    success: body.success,
    score: typeof body.score === 'number' && Number.isFinite(body.score) ? body.score : undefined,
    action: typeof body.action === 'string' ? body.action : undefined,
    hostname: typeof body.hostname === 'string' ? body.hostname : undefined,
    errorCodes: codes,
  };
}
