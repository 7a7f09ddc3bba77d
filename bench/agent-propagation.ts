import { DECISION_PATHS } from '../src/modules/entitlements/engine/index.ts';
import { PROBE } from './agent-seed.ts';
import { BENCH_VENDOR, httpClient, stats } from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// Propagation

export async function propagation(serverUrl: string, agentUrl: string, changes: number, log: (l: string) => void) {
  const api = httpClient(serverUrl);
  const auth = await api.request('POST', '/auth/vendor', { body: BENCH_VENDOR });
  api.setToken(auth.body.token);
  const plan = (await api.request('GET', '/entitlements/resources/plans/v1?limit=1000')).body.items.find(
    (p: { name: string }) => p.name === PROBE.plan,
  );
  if (!plan) throw new Error('probe plan missing');
  const agent = httpClient(agentUrl);
  const body = { input: { subjectContext: { tenantId: PROBE.tenant }, requestContext: { featureKey: PROBE.feature } } };
  const decide = async () =>
    (await agent.request('POST', DECISION_PATHS.feature, { body })).body.result.result as boolean;
  if ((await decide()) !== false) throw new Error('probe account is entitled before the first change');
  const samples: number[] = [];
  const writes: number[] = [];
  let grantId: string | undefined;
  for (let i = 0; i < changes; i++) {
    // A random phase against the agent's poll timer.
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 1000));
    const want = grantId === undefined;
    const t0 = performance.now();
    const w = want
      ? await api.request('POST', '/entitlements/resources/entitlements/v2', {
          body: { planId: plan.id, tenantId: PROBE.tenant, expirationDate: null },
        })
      : await api.request('DELETE', `/entitlements/resources/entitlements/v2/${grantId}`);
    if (w.status !== 200) throw new Error(`management write answered ${w.status}: ${JSON.stringify(w.body)}`);
    writes.push(w.ms);
    grantId = want ? w.body.id : undefined;
    for (;;) {
      if ((await decide()) === want) break;
      if (performance.now() - t0 > 20_000) throw new Error(`change ${i} not reflected within 20 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    samples.push(performance.now() - t0);
  }
  api.close();
  agent.close();
  const s = stats(samples);
  log(`  propagation: p50 ${s.p50.toFixed(0)} ms over ${s.n} changes`);
  return { propagation: s, write: stats(writes) };
}
