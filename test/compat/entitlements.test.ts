import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  evaluateIsEntitledToFeature,
  evaluateIsEntitledToPermissions,
  type UserEntitlementsContext,
} from '@frontegg/entitlements-javascript-commons';
import { createLogger } from '../../src/lib/log.ts';
import { createAgentApp } from '../../src/modules/entitlements/agent/app.ts';
import { createSnapshotSync } from '../../src/modules/entitlements/agent/sync.ts';
import { DECISION_PATHS } from '../../src/modules/entitlements/engine/index.ts';
import { VENDOR } from '../helpers/harness.ts';
import { startBrowserSdk } from '../helpers/sdk.ts';

// The user-entitlements answer, read by the browser SDK and fed to the vendor's evaluator, agrees with the agent.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
let agent: Awaited<ReturnType<typeof createAgentApp>>;
let sync: ReturnType<typeof createSnapshotSync>;
let agentOrigin: string;
let userId: string;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-'));
const E = '/entitlements/resources';
const FEATURES = ['reports', 'export', 'audit', 'beta', 'expiring', 'ghost'];
const PERMISSIONS = [
  'reports.read',
  'export.run',
  'exp.use',
  'fe.secure.read.users',
  'fe.secure.write.users',
  'never.held',
];
// The agent's justification for an expired grant has the evaluator's name BUNDLE_EXPIRED.
const sdkName = (j?: string) => (j === 'PLAN_EXPIRED' ? 'BUNDLE_EXPIRED' : j);

async function v(method: string, url: string, body?: unknown) {
  const r = await s.t.call(method, url, { token: s.vendor, body });
  assert.ok(r.status < 300, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

before(async () => {
  s = await startBrowserSdk();
  await s.account('e-acme', 'Acme');
  userId = await s.user('e-acme', 'ent@acme.test');
  const roles = await v('GET', '/identity/resources/roles/v1');
  const admin = roles.find((r: { key: string }) => r.key === 'admin');
  const perms = await v('POST', '/identity/resources/permissions/v1', [
    { key: 'reports.read', name: 'R' },
    { key: 'export.run', name: 'X' },
  ]);
  for (const p of perms) await v('PUT', `/identity/resources/permissions/v1/${p.id}/roles`, { roleIds: [admin.id] });
  await v('POST', `${E}/features/v1`, { name: 'Reports', key: 'reports', permissions: ['reports.read'] });
  await v('POST', `${E}/features/v1`, { name: 'Export', key: 'export', permissions: ['export.run'] });
  await v('POST', `${E}/features/v1`, { name: 'Audit', key: 'audit', permissions: ['fe.secure.read.users'] });
  await v('POST', `${E}/features/v1`, { name: 'Beta', key: 'beta' });
  await v('POST', `${E}/features/v1`, { name: 'Expiring', key: 'expiring', permissions: ['exp.use'] });
  const pro = await v('POST', `${E}/plans/v1`, { name: 'Pro', featureKeys: ['reports'] });
  const mine = await v('POST', `${E}/plans/v1`, { name: 'Mine', featureKeys: ['export'] });
  const short = await v('POST', `${E}/plans/v1`, { name: 'Short', featureKeys: ['expiring'] });
  await v('POST', `${E}/entitlements/v2`, { planId: pro.id, tenantId: 'e-acme', expirationDate: null });
  await v('POST', `${E}/entitlements/v2`, { planId: mine.id, tenantId: 'e-acme', userId, expirationDate: null });
  const soon = new Date(Date.now() + 1500).toISOString();
  await v('POST', `${E}/entitlements/v2`, { planId: short.id, tenantId: 'e-acme', expirationDate: soon });
  await new Promise((r) => setTimeout(r, 1600));

  sync = createSnapshotSync({
    serverUrl: s.t.origin,
    clientId: VENDOR.clientId,
    apiKey: VENDOR.secret,
    pollMs: 50,
    snapshotFile: join(dir, 'snapshot.json'),
    log: createLogger('silent'),
  });
  void sync.start();
  agent = await createAgentApp({
    engine: () => sync.engine,
    offset: () => sync.offset,
    logger: false,
    bodyLimit: 1 << 20,
  });
  await agent.listen({ port: 0, host: '127.0.0.1' });
  agentOrigin = `http://127.0.0.1:${(agent.server.address() as AddressInfo).port}`;
  for (let i = 0; i < 200 && !sync.engine; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(sync.engine, 'the agent loaded a snapshot');
  await s.signIn('ent@acme.test');
});
after(async () => {
  sync?.stop();
  await agent?.close();
  await s?.t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(kind: 'feature' | 'permission', key: string, permissions: string[]) {
  const requestContext = kind === 'feature' ? { featureKey: key } : { permissionKey: key };
  const res = await fetch(`${agentOrigin}${DECISION_PATHS[kind]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      input: { subjectContext: { tenantId: 'e-acme', userId, permissions, attributes: {} }, requestContext },
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { result: { result: boolean; justification?: string } }).result;
}

describe('user entitlements and the vendor evaluator', () => {
  test('loadEntitlementsV2 answers a UserEntitlementsContext', async () => {
    const ctx = await s.sdk.api.entitlements.loadEntitlementsV2();
    assert.deepEqual(ctx.plans, {});
    assert.deepEqual(ctx.features.reports, { planIds: [], expireTime: -1, linkedPermissions: ['reports.read'] });
    assert.equal(ctx.features.beta.expireTime, null);
    assert.equal(ctx.permissions['reports.read'], true);
    assert.equal(ctx.permissions['exp.use'], undefined);
  });

  test('every feature and permission: the evaluator over the answer decides as the agent', async () => {
    const ctx = (await s.sdk.api.entitlements.loadEntitlementsV2()) as UserEntitlementsContext;
    // The permission keys of the signed-in user's token, as an application would hand them to the agent.
    const token = s.sdk.ContextHolder.for('default').getAccessToken()!;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    const permissions = claims.permissions as string[];
    const seen: Record<string, boolean> = {};
    for (const key of FEATURES) {
      const mine = evaluateIsEntitledToFeature(key, ctx);
      const theirs = await ask('feature', key, permissions);
      assert.equal(mine.isEntitled, theirs.result, `feature ${key}`);
      const why = (mine as { justification?: string }).justification;
      if (!theirs.result) assert.equal(sdkName(theirs.justification), why, key);
      seen[key] = mine.isEntitled;
    }
    for (const key of PERMISSIONS) {
      const mine = evaluateIsEntitledToPermissions(key, ctx, {});
      const theirs = await ask('permission', key, permissions);
      assert.equal(mine.isEntitled, theirs.result, `permission ${key}`);
      const why = (mine as { justification?: string }).justification;
      if (!theirs.result) assert.equal(sdkName(theirs.justification), why, key);
      seen[key] = mine.isEntitled;
    }
    // The data covers each kind of answer.
    assert.deepEqual(seen, {
      reports: true,
      export: true,
      audit: false,
      beta: false,
      expiring: false,
      ghost: false,
      'reports.read': true,
      'export.run': true,
      'exp.use': false,
      'fe.secure.read.users': false,
      'fe.secure.write.users': true,
      'never.held': false,
    });
  });
});
