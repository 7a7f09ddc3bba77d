import autocannon from 'autocannon';
import { DECISION_PATHS, type DecisionKind } from '../src/modules/entitlements/engine/index.ts';
import { CONNECTIONS, type Sizes } from './agent-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// Load

/** 40 requests cycled by every connection: 50% feature, 30% permission, 20% route, over spread accounts and users. */
export function requestMix(s: Sizes): autocannon.Request[] {
  const out: autocannon.Request[] = [];
  const tiers = ['free', 'team', 'enterprise'];
  for (let i = 0; i < 40; i++) {
    const tenant = `acct-${1 + ((i * 7919) % s.accounts)}`;
    const f = 1 + ((i * 31) % s.features);
    const subjectContext = {
      tenantId: tenant,
      userId: i % 2 ? `user-${3 + (i % 2)}` : `u-${i}`,
      permissions: [
        `perm-${f}.read`,
        `perm-${1 + ((f + 4) % s.features)}.*`,
        'account.read',
        'users.read',
        'users.write',
        'billing.view',
      ],
      attributes: { tier: tiers[i % 3], seats: i * 3, beta: i % 4 === 0, email: `user${i}@example.com` },
    };
    const kind: DecisionKind = i % 10 < 5 ? 'feature' : i % 10 < 8 ? 'permission' : 'route';
    const requestContext =
      kind === 'feature'
        ? { featureKey: `feature-${f}` }
        : kind === 'permission'
          ? { permissionKey: `perm-${1 + ((i * 13) % s.features)}.read` }
          : i % 20 === 9
            ? { method: 'GET', path: '/public/docs/index.html' }
            : {
                method: ['GET', 'POST', 'PUT', 'DELETE'][(i * 3) % 4],
                path: `/api/v1/resource-${1 + ((i * 3) % s.routes)}/42`,
              };
    out.push({
      method: 'POST',
      path: DECISION_PATHS[kind],
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { subjectContext, requestContext } }),
    });
  }
  return out;
}

export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
  errors: number;
  seconds: number;
}

export async function cannon(url: string, requests: autocannon.Request[], seconds: number): Promise<LoadResult> {
  const r = await autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests });
  return {
    rps: Math.round(r.requests.average),
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.average,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    seconds,
  };
}

/** Checks the mix answers 200 with both outcomes present (not all false because of a seeding mistake). */
export async function sanity(url: string, requests: autocannon.Request[]): Promise<{ true: number; false: number }> {
  const out = { true: 0, false: 0 };
  for (const r of requests) {
    const res = await fetch(`${url}${r.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: r.body as string,
    });
    if (res.status !== 200) throw new Error(`${r.path} answered ${res.status}: ${await res.text()}`);
    const b = (await res.json()) as { result: { result: boolean } };
    out[b.result.result ? 'true' : 'false']++;
  }
  if (!out.true || !out.false) throw new Error(`the request mix should have both outcomes: ${JSON.stringify(out)}`);
  return out;
}
