import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Decision, DecisionKind, Rule, SnapshotData } from '../../src/modules/entitlements/engine/index.ts';

/**
 * Decision tables (`test/decisions/*.json`): a setup described in management terms (so the same table can be built
 * in-process, through the management API, or fed to an agent) and the cases to decide against it.
 */
export interface Table {
  file: string;
  description: string;
  setup: {
    features?: { key: string; permissions?: string[] }[];
    plans?: { name: string; features: string[]; defaultTreatment?: 'true' | 'false'; rules?: Rule[] }[];
    /** `expires`: null, an ISO date, or relative to now: "+30d", "-1d", "+2h". */
    grants?: { plan: string; tenantId: string; userId?: string | null; expires?: string | null }[];
    flags?: {
      feature: string;
      on: boolean;
      defaultTreatment: 'true' | 'false';
      offTreatment: 'true' | 'false';
      rules?: Rule[];
    }[];
    routes?: {
      method: string;
      path: string;
      priority?: number;
      policyType: 'allow' | 'deny' | 'ruleBased';
      rules?: { type: 'feature' | 'permission'; value: string }[];
    }[];
    routesMode?: 'guard' | 'monitor';
  };
  cases: {
    name: string;
    kind: DecisionKind;
    subject: Record<string, unknown>;
    request: Record<string, unknown>;
    expect: Decision;
  }[];
}

const DIR = dirname(fileURLToPath(import.meta.url));

export function loadTables(): Table[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...JSON.parse(readFileSync(join(DIR, file), 'utf8')) }));
}

export function resolveDate(v: string | null | undefined, now = Date.now()): string | null {
  if (v === null || v === undefined) return null;
  const m = /^([+-])(\d+)([dhm])$/.exec(v);
  if (!m) return v;
  const unit = m[3] === 'd' ? 86_400_000 : m[3] === 'h' ? 3_600_000 : 60_000;
  return new Date(now + (m[1] === '-' ? -1 : 1) * Number(m[2]) * unit).toISOString();
}

/** Tenants a table's grants name (they must exist before grants are made through the API). */
export const tenantsOf = (t: Table) => [...new Set((t.setup.grants ?? []).map((g) => g.tenantId))];

/** The table's setup as snapshot data, ids = names (in-process runs). */
export function snapshotOf(t: Table): SnapshotData {
  const s = t.setup;
  let priority = 0;
  return {
    features: (s.features ?? []).map((f) => [`f:${f.key}`, f.key, f.permissions ?? []]),
    featureBundles: (s.plans ?? []).map((p) => [
      `p:${p.name}`,
      p.features.map((k) => `f:${k}`),
      p.defaultTreatment ?? 'false',
      p.rules ?? [],
    ]),
    entitlements: (s.grants ?? []).map((g) => [`p:${g.plan}`, g.tenantId, g.userId ?? null, resolveDate(g.expires)]),
    featureFlags: (s.flags ?? []).map((f) => [
      f.feature,
      f.on,
      'boolean',
      f.defaultTreatment,
      f.offTreatment,
      f.rules ?? [],
    ]),
    routes: (s.routes ?? []).map((r, i) => {
      priority = r.priority ?? priority + 1;
      return [
        `r:${i}`,
        r.method as 'GET',
        r.path,
        priority,
        r.policyType,
        (r.rules ?? []).map((x) => [x.type, x.value] as ['feature', string]),
      ];
    }),
    routesMode: s.routesMode ?? 'guard',
  };
}

export const requestBody = (c: Table['cases'][number]) => ({
  input: { subjectContext: c.subject, requestContext: c.request },
});
export const KIND_PATH: Record<DecisionKind, string> = {
  feature: 'features',
  permission: 'permissions',
  route: 'routes',
};

type Call = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: any }>;
const E = '/entitlements/resources';

/** Removes every feature, plan (and so grant), flag and route, and sets the mode back to guard. */
export async function clearEntitlements(call: Call): Promise<void> {
  for (const r of (await call('GET', `${E}/routes/v1`)).body) await must(call('DELETE', `${E}/routes/v1/${r.id}`));
  for (;;) {
    const plans = (await call('GET', `${E}/plans/v1?limit=1000`)).body.items;
    if (!plans.length) break;
    for (const p of plans) await must(call('DELETE', `${E}/plans/v1/${p.id}`));
  }
  for (;;) {
    const feats = (await call('GET', `${E}/features/v1?limit=1000`)).body.items;
    if (!feats.length) break;
    for (const f of feats) await must(call('DELETE', `${E}/features/v1/${f.id}`));
  }
  await must(call('PATCH', `${E}/routes/v1/configuration`, { accessControlMode: 'guard' }));
}

async function must(p: Promise<{ status: number; body: any }>) {
  const r = await p;
  if (r.status !== 200) throw new Error(`setup call failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Builds a table's setup through the management API (tenants must exist; `createTenant` makes them). */
export async function applyTable(call: Call, t: Table, createTenant: (id: string) => Promise<void>): Promise<void> {
  const s = t.setup;
  for (const id of tenantsOf(t)) await createTenant(id);
  const featureIds = new Map<string, string>();
  for (const f of s.features ?? [])
    featureIds.set(
      f.key,
      (await must(call('POST', `${E}/features/v1`, { name: f.key, key: f.key, permissions: f.permissions ?? [] }))).id,
    );
  const planIds = new Map<string, string>();
  for (const p of s.plans ?? []) {
    planIds.set(
      p.name,
      (
        await must(
          call('POST', `${E}/plans/v1`, {
            name: p.name,
            featureKeys: p.features,
            defaultTreatment: p.defaultTreatment ?? 'false',
            rules: p.rules ?? [],
          }),
        )
      ).id,
    );
  }
  for (const g of s.grants ?? []) {
    await must(
      call('POST', `${E}/entitlements/v2`, {
        planId: planIds.get(g.plan),
        tenantId: g.tenantId,
        userId: g.userId ?? null,
        expirationDate: resolveDate(g.expires),
      }),
    );
  }
  for (const f of s.flags ?? []) {
    await must(
      call('POST', `${E}/feature-flags/v1`, {
        name: `flag ${f.feature}`,
        featureId: featureIds.get(f.feature),
        on: f.on,
        defaultTreatment: f.defaultTreatment,
        offTreatment: f.offTreatment,
        rules: f.rules ?? [],
      }),
    );
  }
  for (const r of s.routes ?? []) {
    await must(
      call('POST', `${E}/routes/v1`, {
        method: r.method,
        path: r.path,
        policyType: r.policyType,
        description: '',
        ...(r.priority !== undefined ? { priority: r.priority } : {}),
        rules: r.rules ?? [],
      }),
    );
  }
  if (s.routesMode) await must(call('PATCH', `${E}/routes/v1/configuration`, { accessControlMode: s.routesMode }));
}
