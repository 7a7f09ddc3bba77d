import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rejectsWith, startBrowserSdk } from '../helpers/sdk.ts';

// Sub-accounts through the browser SDK, signed in as the administrator of the top account.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;

before(async () => {
  s = await startBrowserSdk();
  await s.account('h-top', 'Top');
  await s.account('h-mid', 'Mid', 'h-top');
  await s.account('h-leaf', 'Leaf', 'h-mid');
  await s.user('h-top', 'admin@top.test');
  await s.user('h-leaf', 'admin@leaf.test');
  await s.signIn('admin@top.test');
});
after(async () => s?.t.close());

describe('@frontegg/rest-api sub-accounts', () => {
  test('getSubTenants lists the descendants with their level', async () => {
    // The SDK declares one ISubTenant; a list of them arrives (as the portal reads it).
    type Sub = { tenantId: string; tenantName?: string; level: number };
    const subs = (await s.sdk.api.tenants.getSubTenants()) as unknown as Sub[];
    assert.ok(Array.isArray(subs), JSON.stringify(subs));
    const byId = new Map(subs.map((x) => [x.tenantId, x]));
    assert.equal(byId.get('h-mid')?.level, 1);
    assert.equal(byId.get('h-leaf')?.level, 2);
    assert.equal(byId.get('h-mid')?.tenantName, 'Mid');
  });

  test('getSubTenantsAsTree answers the tree under the account', async () => {
    const tree = await s.sdk.api.tenants.getSubTenantsAsTree();
    assert.ok(!Array.isArray(tree), 'one tree, as ISubTenantTree declares');
    const root = tree;
    assert.equal(root.tenantId, 'h-top', JSON.stringify(tree));
    assert.equal(root.children[0].tenantId, 'h-mid');
    assert.equal(root.children[0].children[0].tenantId, 'h-leaf');
  });

  test('getParentTenants answers the ancestors of the leaf, signed in there', async () => {
    await s.sdk.api.auth.logout();
    await s.signIn('admin@leaf.test');
    const parents = await s.sdk.api.tenants.getParentTenants();
    assert.ok(Array.isArray(parents), JSON.stringify(parents));
    const ids = parents.map((p) => p.tenantId);
    assert.ok(ids.includes('h-mid') && ids.includes('h-top'), JSON.stringify(parents));
    for (const p of parents) assert.equal(typeof p.level, 'number');
    await s.sdk.api.auth.logout();
    await s.signIn('admin@top.test');
  });

  test('createSubTenant, updateSubTenantManagement, deleteSubTenant', async () => {
    const created = await s.sdk.api.subTenants.createSubTenant({
      tenantId: 'h-new',
      name: 'New',
      parentTenantId: 'h-top',
    });
    assert.equal(created.tenantId, 'h-new');
    assert.equal(created.name, 'New');
    const managed = await s.sdk.api.subTenants.updateSubTenantManagement({ tenantId: 'h-new' }, { isReseller: true });
    assert.equal(managed.tenantId, 'h-new');
    await s.sdk.api.subTenants.deleteSubTenant('h-new');
    const subs = (await s.sdk.api.tenants.getSubTenants()) as unknown as { tenantId: string }[];
    assert.ok(!subs.some((x) => x.tenantId === 'h-new'));
    // Gone: no longer in the signed-in user's tree, so refused as any account outside it.
    await rejectsWith(s.sdk.api.subTenants.deleteSubTenant('h-new'), 403);
  });

  test('a sub-account outside the own tree cannot be removed', async () => {
    await s.account('h-other', 'Other');
    await s.account('h-other-child', 'Other child', 'h-other');
    await assert.rejects(s.sdk.api.subTenants.deleteSubTenant('h-other-child'));
  });
});
