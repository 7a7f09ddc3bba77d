import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type Reply, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

/** The calling account's tree (GET /tenants/resources/hierarchy/v2) and the same with metadata (/v2/metadata). */
let t: TestApp;
let vendor: string;
const V2 = '/tenants/resources/hierarchy/v2';
const READ = 'fe.account-hierarchy.read.subaccount';
const u: Record<string, string> = {};

const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
async function ok(method: string, url: string, body?: unknown, tenantId?: string) {
  const r = await t.call(method, url, { token: vendor, body, headers: tenantId ? hdr(tenantId) : {} });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
function fails(r: Reply, status: number, errorCode: string, message?: RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, errorCode);
  if (message) assert.match(r.body.errors.join(' '), message);
}
const sub = (tenantId: string, parentTenantId: string, name: string, metadata?: object) =>
  ok('POST', '/tenants/resources/sub-tenants/v1', {
    tenantId,
    name,
    parentTenantId,
    ...(metadata ? { metadata: JSON.stringify(metadata) } : {}),
  });
const node = (
  tenantId: string,
  tenantName: string,
  parentTenantId: string | null,
  level: number,
  children: unknown[] = [],
) => ({ tenantId, tenantName, parentTenantId, level, children });
/** Every node of a tree as `id@parent`, depth first. */
const flat = (n: any): string[] => [`${n.tenantId}@${n.parentTenantId}`, ...n.children.flatMap(flat)];
async function asUser(userId: string, tenantId: string, path = V2) {
  const r = await t.call('GET', path, { token: await t.userToken({ sub: userId, tenantId, permissions: [READ] }) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  //  hv-root ─┬─ hv-a (ada: sub-account access) ─┬─ hv-a1 ── hv-a1x
  //           │                                   └─ hv-a2 (ada: no sub-account access) ── hv-a2x
  //           └─ hv-b (bob) ── hv-b1
  await account(t, { id: 'hv-root', name: 'Root', fields: { metadata: JSON.stringify({ tier: 'top' }) } });
  await sub('hv-a', 'hv-root', 'Alpha');
  await sub('hv-a2', 'hv-a', 'A two');
  await sub('hv-a1', 'hv-a', 'A one', { plan: 'gold', seats: 5 });
  await sub('hv-a1x', 'hv-a1', 'A one x');
  await sub('hv-a2x', 'hv-a2', 'A two x');
  await sub('hv-b', 'hv-root', 'Beta');
  await sub('hv-b1', 'hv-b', 'Beta one');
  await account(t, { id: 'hv-other', name: 'Other' });
  u.ada = (await user(t, 'hv-a', { email: 'ada@hv.test', password: null })).id;
  await ok('POST', `/identity/resources/users/v1/${u.ada}/tenant`, { tenantId: 'hv-a2' });
  await ok('PUT', `/identity/resources/sub-tenants/users/v1/${u.ada}/access`, { allowAccess: true }, 'hv-a');
  u.bob = (await user(t, 'hv-b', { email: 'bob@hv.test', password: null })).id;
});
after(async () => t?.close());

describe('account tree v2', () => {
  test("vendor: the tenant header's account and all its sub-accounts, nested, children by name", async () => {
    assert.deepEqual(
      await ok('GET', V2, undefined, 'hv-root'),
      node('hv-root', 'Root', null, 0, [
        node('hv-a', 'Alpha', 'hv-root', 1, [
          node('hv-a1', 'A one', 'hv-a', 2, [node('hv-a1x', 'A one x', 'hv-a1', 3)]),
          node('hv-a2', 'A two', 'hv-a', 2, [node('hv-a2x', 'A two x', 'hv-a2', 3)]),
        ]),
        node('hv-b', 'Beta', 'hv-root', 1, [node('hv-b1', 'Beta one', 'hv-b', 2)]),
      ]),
    );
    // A sub-account as the top: its parent is named, its level is 0.
    assert.deepEqual(
      await ok('GET', `/frontegg${V2}`, undefined, 'hv-b'),
      node('hv-b', 'Beta', 'hv-root', 0, [node('hv-b1', 'Beta one', 'hv-b', 1)]),
    );
  });

  test("/metadata: the same tree with each account's metadata as a stringified JSON object", async () => {
    const tree = await ok('GET', `${V2}/metadata`, undefined, 'hv-root');
    assert.equal(tree.metadata, JSON.stringify({ tier: 'top' }));
    const alpha = tree.children[0];
    assert.equal(alpha.metadata, '{}');
    assert.deepEqual(JSON.parse(alpha.children[0].metadata), { plan: 'gold', seats: 5 });
    assert.deepEqual(flat(tree), flat(await ok('GET', V2, undefined, 'hv-root')));
    assert.equal(
      'metadata' in (await ok('GET', V2, undefined, 'hv-root')),
      false,
      'the plain tree carries no metadata',
    );
  });

  test('a user sees their account and only the sub-accounts their access reaches', async () => {
    // ada's membership of hv-a opens hv-a1 and below; her own membership of hv-a2 (no access) keeps hv-a2x closed.
    assert.deepEqual(flat(await asUser(u.ada, 'hv-a')), ['hv-a@hv-root', 'hv-a1@hv-a', 'hv-a1x@hv-a1', 'hv-a2@hv-a']);
    const meta = await asUser(u.ada, 'hv-a', `${V2}/metadata`);
    assert.deepEqual(JSON.parse(meta.children[0].metadata), { plan: 'gold', seats: 5 });
    assert.deepEqual(flat(meta), ['hv-a@hv-root', 'hv-a1@hv-a', 'hv-a1x@hv-a1', 'hv-a2@hv-a']);
    // bob's account does not open hv-b1 (defaultOff); a token naming the root shows no account he does not reach.
    assert.deepEqual(await asUser(u.bob, 'hv-b'), node('hv-b', 'Beta', 'hv-root', 0));
    assert.deepEqual(flat(await asUser(u.bob, 'hv-root')), ['hv-root@null', 'hv-b@hv-root']);
    // Access switched on for the account: bob now reaches hv-b1.
    await ok('PUT', '/tenants/resources/sub-tenants/v1/hv-b/hierarchy-settings', { subAccountAccessType: 'alwaysOn' });
    assert.deepEqual(flat(await asUser(u.bob, 'hv-b')), ['hv-b@hv-root', 'hv-b1@hv-b']);
    // A subject that is no user reaches nothing below the token's account.
    assert.deepEqual(await asUser('not-a-user', 'hv-a'), node('hv-a', 'Alpha', 'hv-root', 0));
  });

  test('errors: no header 400, unknown account 404, missing permission 403, no token 401', async () => {
    for (const path of [V2, `${V2}/metadata`]) {
      fails(await t.call('GET', path, { token: vendor }), 400, 'GH-20006');
      fails(
        await t.call('GET', path, { token: vendor, headers: hdr('hv-nowhere') }),
        404,
        'GH-30001',
        /gatehouse-tenant-id hv-nowhere/,
      );
      fails(
        await t.call('GET', path, { token: await t.userToken({ sub: u.ada, tenantId: 'hv-a', permissions: [] }) }),
        403,
        'GH-20004',
        /fe.account-hierarchy.read.subaccount/,
      );
      fails(await t.call('GET', path), 401, 'GH-20001');
    }
    // A removed account: 404 for its tree; its sub-accounts move up to its parent.
    await ok('DELETE', '/tenants/resources/sub-tenants/v1/hv-a1');
    fails(await t.call('GET', V2, { token: vendor, headers: hdr('hv-a1') }), 404, 'GH-30001');
    assert.deepEqual(flat(await ok('GET', V2, undefined, 'hv-a')), [
      'hv-a@hv-root',
      'hv-a1x@hv-a',
      'hv-a2@hv-a',
      'hv-a2x@hv-a2',
    ]);
  });
});
